//! Memory planned at compile time: the plan's statistics against hand-counted live sets,
//! buffers shared by temporaries that are never live together, a `memory_limit` below the peak
//! refused (and the executable and process going on), and a run that needs more than the
//! machine has refused before it allocates, in a child process, rather than killed by the
//! kernel.

use lazy_xla::*;

fn sum(ty: ElementType) -> XlaComputation {
    let r = XlaBuilder::new("sum");
    let s = Shape::scalar(ty);
    let (a, b) = (r.parameter(0, &s, "a"), r.parameter(1, &s, "b"));
    r.build(a + b).expect("a reducer")
}

/// `n` chained `exp`s of an f32[len] parameter, unfused.
fn chain(n: usize, len: i64) -> Executable {
    let b = XlaBuilder::new("chain");
    let mut y = b.parameter(0, &shape!(f32[len]), "x");
    for _ in 0..n {
        y = exp(y);
    }
    b.build(y).unwrap().compile(&CompileOptions::unfused()).unwrap()
}

#[test]
fn a_chain_of_any_length_needs_two_temporaries() {
    let bytes = 4 << 16;
    for n in [2, 3, 8, 40] {
        let stats = chain(n, 1 << 16).memory_stats();
        assert_eq!(stats.argument_bytes, bytes);
        assert_eq!(stats.output_bytes, bytes);
        // Each temporary is live from its exp to the next; two neighbours never share.
        assert_eq!(stats.temp_bytes, if n == 2 { bytes } else { 2 * bytes }, "{n}: {stats:?}");
        assert_eq!(stats.peak_bytes, 3 * bytes, "{n}: {stats:?}");
    }
    let x = Literal::from_vec(&shape!(f32[65536]), vec![0.25f32; 1 << 16]).unwrap();
    let got = chain(3, 1 << 16).execute(&[&x]).unwrap().to_vec::<f32>().unwrap();
    let want = 0.25f32.exp().exp().exp();
    assert!(got.iter().all(|&v| (v - want).abs() <= 1e-5 * want), "{} against {want}", got[0]);
}

#[test]
fn peaks_count_what_is_live_together() {
    // d = (a + b) · c with a, b, c = exp, log, tanh of x, unfused: a, b and c are live at once.
    let b = XlaBuilder::new("diamond");
    let x = b.parameter(0, &shape!(f32[1000]), "x");
    let (p, q, r) = (exp(x), log(x), tanh(x));
    let exe = b.build((p + q) * r).unwrap().compile(&CompileOptions::unfused()).unwrap();
    let stats = exe.memory_stats();
    let bytes = 4000u64;
    let aligned = 4032u64; // rounded up to a cache line in the heap
    assert_eq!((stats.argument_bytes, stats.output_bytes), (bytes, bytes));
    // exp, log, tanh, then their sum while all three live: four buffers at the sum's step.
    assert_eq!(stats.peak_bytes, bytes + 4 * aligned, "{stats:?}");
    // Fused, it is one loop: nothing but the argument and the output.
    let fused = b.build((p + q) * r).unwrap().compile(&CompileOptions::default()).unwrap();
    let expected = MemoryStats {
        argument_bytes: bytes,
        output_bytes: bytes,
        temp_bytes: 0,
        peak_bytes: 2 * bytes,
        unplanned_bytes: 2 * bytes,
    };
    assert_eq!(fused.memory_stats(), expected);
    assert_eq!(stats.unplanned_bytes, 6 * bytes, "the argument and five arrays");
}

#[test]
fn kernels_scratch_and_loop_bodies_count_in_the_peak() {
    // A dot of bf16 operands to f32 sums in f32 panels: its scratch is part of the peak.
    let b = XlaBuilder::new("dot");
    let x = b.parameter(0, &shape!(bf16[64, 128]), "x");
    let w = b.parameter(1, &shape!(bf16[128, 32]), "w");
    let exe = b.build(dot(x, w)).unwrap().compile(&CompileOptions::default()).unwrap();
    let stats = exe.memory_stats();
    assert!(stats.peak_bytes > stats.argument_bytes + stats.output_bytes, "{stats:?}");
    // A loop whose body makes a temporary of its state's size: the body's plan is counted.
    let state = Shape::tuple(&[shape!(s32[]), shape!(f32[4096])]);
    let c = XlaBuilder::new("condition");
    let s = c.parameter(0, &state, "s");
    let condition = c.build(lt(get_tuple_element(s, 0), c.constant_r0(3i32), &[])).unwrap();
    let d = XlaBuilder::new("body");
    let s = d.parameter(0, &state, "s");
    let (n, v) = (get_tuple_element(s, 0), get_tuple_element(s, 1));
    let body = d.build(tuple(&d, &[n + d.constant_r0(1i32), exp(v) + v])).unwrap();
    let b = XlaBuilder::new("loop");
    let x = b.parameter(0, &shape!(f32[4096]), "x");
    let result = get_tuple_element(while_loop(&condition, &body, tuple(&b, &[b.constant_r0(0i32), x])), 1);
    let exe = b.build(result).unwrap().compile(&CompileOptions::unfused()).unwrap();
    let stats = exe.memory_stats();
    // The argument, the state (the argument itself), the body's exp and its new state.
    assert!(stats.peak_bytes >= 3 * 16384, "{stats:?}");
    let got = exe.execute(&[&Literal::from_vec(&shape!(f32[4096]), vec![0.0f32; 4096]).unwrap()]).unwrap();
    let mut want = 0.0f64;
    for _ in 0..3 {
        want += want.exp();
    }
    let got = got.to_vec::<f32>().unwrap()[4095] as f64;
    assert!((got - want).abs() < 1e-5 * want, "{got} against {want}");
}

#[test]
fn a_dynamic_update_slice_writes_over_its_dead_operand_in_place() {
    // The operand (an exp of x) dies at the update: its buffer becomes the update's result.
    let b = XlaBuilder::new("dus");
    let x = b.parameter(0, &shape!(f32[1 << 16]), "x");
    let u = b.parameter(1, &shape!(f32[4]), "u");
    let i = b.parameter(2, &shape!(s32[]), "i");
    let updated = dynamic_update_slice(exp(x), u, &[i]);
    let exe = b.build(neg(updated)).unwrap().compile(&CompileOptions::unfused()).unwrap();
    let stats = exe.memory_stats();
    assert_eq!(stats.temp_bytes, 4 << 16, "one buffer for exp and the update: {stats:?}");
    let xs = Literal::from_vec(&shape!(f32[65536]), vec![0.0f32; 1 << 16]).unwrap();
    let us = Literal::vec1(&[5.0f32, 6.0, 7.0, 8.0]);
    let at = Literal::scalar(65534i32); // clamped to 65532
    let got = exe.execute(&[&xs, &us, &at]).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(&got[65530..], &[-1.0, -1.0, -5.0, -6.0, -7.0, -8.0]);
    assert!(got[..65532].iter().all(|&v| v == -1.0));
    // Read again after the update, the operand keeps its own buffer (and its values).
    let b = XlaBuilder::new("dus_kept");
    let x = b.parameter(0, &shape!(f32[8]), "x");
    let u = b.parameter(1, &shape!(f32[2]), "u");
    let e = exp(x);
    let updated = dynamic_update_slice(e, u, &[b.constant_r0(0i32)]);
    let exe = b.build(updated + e).unwrap().compile(&CompileOptions::unfused()).unwrap();
    let got = exe
        .execute(&[&Literal::vec1(&[0.0f32; 8]), &Literal::vec1(&[3.0f32, 4.0])])
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(got, vec![4.0, 5.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]);
}

#[test]
fn a_limit_below_the_peak_is_an_error_and_everything_else_goes_on() {
    let b = XlaBuilder::new("chain");
    let x = b.parameter(0, &shape!(f32[1048576]), "x");
    let c = b.build(exp(exp(exp(x)))).unwrap();
    let exe = c.compile(&CompileOptions::unfused()).unwrap();
    let peak = exe.memory_stats().peak_bytes;
    let limited = CompileOptions { fusion: false, memory_limit: Some(peak - 1), ..Default::default() };
    let message = c.compile(&limited).err().expect("over the limit").to_string();
    assert!(
        message.contains(&format!("needs {peak} bytes")) && message.contains("memory_limit"),
        "{message}"
    );
    // At the peak it compiles, and an argument in another layout (copied) pushes a run over.
    let at_peak = CompileOptions { fusion: false, memory_limit: Some(peak), ..Default::default() };
    let exact = c.compile(&at_peak).unwrap();
    let xs = Literal::from_vec(&shape!(f32[1048576]), vec![0.0f32; 1 << 20]).unwrap();
    assert!(exact.execute(&[&xs]).is_ok());
    let padded =
        xs.relayout(&Layout::new(&[0]).with_padding(&[1048577], PaddingValue::Zero).unwrap()).unwrap();
    let message = exact.execute(&[&padded]).unwrap_err().to_string();
    assert!(message.contains("Out of memory"), "{message}");
    assert!((exe.execute(&[&padded]).unwrap().to_vec::<f32>().unwrap()[7] - 1f32.exp().exp()).abs() < 1e-5);
}

/// The environment variable that makes [`oversubscribed_child`] run (in a child process).
const CHILD: &str = "LAZY_XLA_OVERSUBSCRIBED_CHILD";

/// In a child process: an unfused computation whose two intermediates together hold 1.4 times
/// the machine's memory (each 0.7) is an error before it allocates them, and the process
/// goes on. The child's address space is capped at 8 GiB, so that were the check missing, the
/// allocation would fail (with another message) rather than take the machine's memory.
#[test]
#[ignore = "run by an_oversubscribed_run_is_an_error_not_an_oom_kill in a child process"]
fn oversubscribed_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let cap = libc::rlimit { rlim_cur: 8 << 30, rlim_max: 8 << 30 };
        // SAFETY: `setrlimit` reads the struct given and changes only this process's limit.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &cap) }, 0);
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let total_kib: i64 = meminfo.lines().next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    let n = total_kib * 1024 / 8 * 7 / 10;
    let b = XlaBuilder::new("oversubscribed");
    let x = b.parameter(0, &shape!(s64[]), "x");
    // An iota and a broadcast, each 0.7 of the machine, and their sum.
    let wide = broadcast(x, &[n]);
    let total =
        reduce(iota(&b, &shape!(s64[n]), 0) + wide, b.constant_r0(0i64), &sum(ElementType::S64), &[0]);
    let exe = b.build(total).unwrap().compile(&CompileOptions::unfused()).unwrap();
    assert!(exe.memory_stats().peak_bytes >= 2 * 8 * n as u64);
    let message = exe.execute(&[&Literal::scalar(1i64)]).unwrap_err().to_string();
    assert!(message.contains("Out of memory") && message.contains("the system has available"), "{message}");
    // The process goes on.
    let b = XlaBuilder::new("small");
    let x = b.parameter(0, &shape!(s64[3]), "x");
    let small = b.build(reduce(x + x, b.constant_r0(0i64), &sum(ElementType::S64), &[0])).unwrap();
    let got =
        small.compile(&CompileOptions::unfused()).unwrap().execute(&[&Literal::vec1(&[1i64, 2, 3])]).unwrap();
    assert_eq!(got.to_vec::<i64>().unwrap(), vec![12]);
    println!("the child went on");
}

#[test]
#[cfg(target_os = "linux")]
fn an_oversubscribed_run_is_an_error_not_an_oom_kill() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "oversubscribed_child", "--ignored", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the child failed ({:?}):\n{stdout}\n{stderr}", output.status);
    assert!(stdout.contains("the child went on"), "{stdout}\n{stderr}");
}
