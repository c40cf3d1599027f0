use lazy_xla::*;
fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let iters: usize = std::env::args().nth(2).map_or(3, |s| s.parse().unwrap());
    let cols: i64 = std::env::var("COLS").ok().map_or(1024, |s| s.parse().unwrap());
    let total: i64 = std::env::var("TOTAL").ok().map_or(4096 * 1024, |s| s.parse().unwrap());
    let shape = Shape::new(ElementType::F32, &[total / cols, cols]);
    let b = XlaBuilder::new("g");
    let x = b.parameter(0, &shape, "x");
    let sum = {
        let r = XlaBuilder::new("sum");
        let (a, c) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
        r.build(a + c).unwrap()
    };
    let maxr = {
        let r = XlaBuilder::new("max");
        let (a, c) = (r.parameter(0, &shape!(f32[]), "a"), r.parameter(1, &shape!(f32[]), "b"));
        r.build(max(a, c, &[])).unwrap()
    };
    let root = match which.as_str() {
        "exp" => exp(x),
        "tanh" => tanh(x),
        "rowsum" => reduce(x, b.constant_r0(0.0f32), &sum, &[1]),
        "colsum" => reduce(x, b.constant_r0(0.0f32), &sum, &[0]),
        "softmax" => {
            let m = reduce(x, b.constant_r0(f32::NEG_INFINITY), &maxr, &[1]);
            let e = exp(sub(x, m, &[0]));
            div(e, reduce(e, b.constant_r0(0.0f32), &sum, &[1]), &[0])
        }
        "layernorm" => {
            let n = b.constant_r0(cols as f32);
            let mean = reduce(x, b.constant_r0(0.0f32), &sum, &[1]) / n;
            let msq = reduce(x * x, b.constant_r0(0.0f32), &sum, &[1]) / n;
            let var = msq - mean * mean;
            let scale = rsqrt(var + b.constant_r0(1e-5f32));
            mul(sub(x, mean, &[0]), scale, &[0]) * b.constant_r0(1.5f32) + b.constant_r0(0.25f32)
        }
        _ => {
            let inner = b.constant_r0(0.797_884_6f32) * (x + b.constant_r0(0.044_715f32) * x * x * x);
            b.constant_r0(0.5f32) * x * (b.constant_r0(1.0f32) + tanh(inner))
        }
    };
    let c = b.build(root).unwrap().compile(&CompileOptions::default()).unwrap();
    let data: Vec<f32> =
        (0..total as usize).map(|i| -4.0 + 8.0 * ((i * 7919 % 10007) as f32 / 10007.0)).collect();
    let xl = Literal::from_vec(&shape, data).unwrap();
    let mut out = c.execute(&[&xl]).unwrap();
    let median = |f: &mut dyn FnMut()| {
        let mut ts: Vec<_> = (0..iters)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed()
            })
            .collect();
        ts.sort();
        if std::env::var("MIN").is_ok() {
            ts[0]
        } else {
            ts[iters / 2]
        }
    };
    let lazy = median(&mut || c.execute_into(&[&xl], &mut out).unwrap());
    if std::env::var("NOBOUND").is_ok() {
        println!("{which} {lazy:?}");
        return;
    }
    let xs = xl.to_vec::<f32>().unwrap();
    let mut copy = vec![0.0f32; xs.len()];
    use rayon::prelude::*;
    let cb = median(&mut || {
        copy.par_chunks_mut(1024).zip(xs.par_chunks(1024)).for_each(|(o, x)| o.copy_from_slice(x))
    });
    let rb = median(&mut || {
        std::hint::black_box(
            xs.par_chunks(1024)
                .map(|r| {
                    let mut a = [0f32; 16];
                    for c in r.chunks_exact(16) {
                        for k in 0..16 {
                            a[k] += c[k];
                        }
                    }
                    a.iter().sum::<f32>()
                })
                .sum::<f32>(),
        );
    });
    let lazy2 = median(&mut || c.execute_into(&[&xl], &mut out).unwrap());
    let mut rs = vec![0f32; total as usize / 1024];
    let hr = median(&mut || {
        rs.par_iter_mut().zip(xs.par_chunks(1024)).for_each(|(o, r)| {
            let mut a = [0f32; 16];
            for c in r.chunks_exact(16) {
                for k in 0..16 {
                    a[k] += c[k];
                }
            }
            *o = a.iter().sum::<f32>()
        })
    });
    println!("again {lazy2:?} hand rowsum {hr:?}");
    println!(
        "{} {:?} copy {:?} ({:.2}x) read {:?} ({:.2}x)",
        which,
        lazy,
        cb,
        lazy.as_secs_f64() / cb.as_secs_f64(),
        rb,
        lazy.as_secs_f64() / rb.as_secs_f64()
    );
}
