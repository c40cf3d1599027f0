//! Shrinks a failing recipe further than proptest can: an earlier root (or one element of a
//! tuple root), a step replaced by a parameter holding its (exact) reference values, default
//! layouts, simpler values — each change kept only if the recipe still fails the same way
//! ([`Failure::class`]).

use crate::common::check::check;
use crate::common::recipe::{Recipe, Step};
use crate::common::reference::evaluate;
use crate::common::values::Value;
use lazy_xla::{ElementType, Layout, Shape};

/// The most recipes tried while minimizing.
const BUDGET: usize = 1500;

struct Minimizer {
    class: String,
    tries: usize,
}

impl Minimizer {
    /// Whether `candidate` fails the same way (counting the try).
    fn fails(&mut self, candidate: &Recipe) -> bool {
        self.tries += 1;
        matches!(check(candidate), Err(f) if f.class() == self.class)
    }

    fn budget_left(&self) -> bool {
        self.tries < BUDGET
    }

    /// The first candidate that still fails, if any.
    fn first_failing(&mut self, candidates: impl Iterator<Item = Recipe>) -> Option<Recipe> {
        for candidate in candidates {
            if !self.budget_left() {
                return None;
            }
            if self.fails(&candidate) {
                return Some(candidate);
            }
        }
        None
    }
}

/// The recipe rooted at step `root` alone (its result in the default layout), pruned.
fn rerooted(recipe: &Recipe, root: usize, rank: usize) -> Recipe {
    let output_layouts = vec![Layout::default_for_rank(rank)];
    Recipe { steps: recipe.steps.clone(), results: vec![root], tuple: false, output_layouts }.pruned()
}

/// Candidates with one step replaced by a parameter of its exact reference values.
fn cuts(recipe: &Recipe) -> Vec<Recipe> {
    let arrays = evaluate(recipe);
    let last = recipe.results.iter().max().copied().unwrap_or(0);
    (0..last)
        .rev()
        .filter(|&k| arrays[k].is_exact() && !matches!(recipe.steps[k], Step::Parameter { .. }))
        .map(|k| {
            let shape = Shape::new(arrays[k].ty, &arrays[k].dims);
            let mut steps = recipe.steps.clone();
            let argument_layout = shape.layout().clone();
            steps[k] = Step::Parameter { shape, argument_layout, values: arrays[k].values() };
            Recipe { steps, ..recipe.clone() }.pruned()
        })
        .collect()
}

/// The recipe with every layout the default one (`all`), or only step `k`'s.
fn plain_layouts(recipe: &Recipe, only: Option<usize>) -> Recipe {
    let mut plain = recipe.clone();
    for (i, step) in plain.steps.iter_mut().enumerate() {
        if only.is_some_and(|k| k != i) {
            continue;
        }
        match step {
            Step::Parameter { shape, argument_layout, .. } => {
                *shape = shape.with_default_layout();
                *argument_layout = shape.layout().clone();
            }
            Step::ConstantLiteral { shape, .. }
            | Step::Iota { shape, .. }
            | Step::RngBitGenerator { shape, .. } => *shape = shape.with_default_layout(),
            _ => {}
        }
    }
    if only.is_none() {
        for layout in &mut plain.output_layouts {
            *layout = Layout::default_for_rank(layout.minor_to_major().len());
        }
    }
    plain
}

/// The values of a parameter or constant step, and their element type.
fn values_mut(step: &mut Step) -> Option<(&mut Vec<Value>, ElementType)> {
    match step {
        Step::Parameter { shape, values, .. } | Step::ConstantLiteral { shape, values } => {
            Some((values, shape.element_type()))
        }
        _ => None,
    }
}

/// Candidates with one value of a parameter or constant replaced by a simpler one (0 or 1).
fn simpler_values(recipe: &Recipe) -> Vec<Recipe> {
    let mut candidates = Vec::new();
    for k in 0..recipe.steps.len() {
        let mut step = recipe.steps[k].clone();
        let Some((values, ty)) = values_mut(&mut step) else { continue };
        for position in 0..values.len() {
            // 0 is simpler than 1, which is simpler than anything else.
            let (zero, one) = (Value::Int(0).into_type(ty), Value::Int(1).into_type(ty));
            let simpler: &[Value] = match values[position] {
                v if v.same(zero) => &[],
                v if v.same(one) => &[zero],
                _ => &[zero, one],
            };
            for &simple in simpler {
                let mut candidate = recipe.clone();
                if let Some((candidate_values, _)) = values_mut(&mut candidate.steps[k]) {
                    candidate_values[position] = simple;
                }
                candidates.push(candidate);
            }
        }
    }
    candidates
}

/// A smaller recipe that fails with the same [`Failure::class`](crate::common::check::Failure::class).
pub fn minimize(recipe: &Recipe, class: &str) -> Recipe {
    let mut m = Minimizer { class: class.to_string(), tries: 0 };
    let mut best = recipe.pruned();
    while m.budget_left() {
        let arrays = evaluate(&best);
        // A single earlier result (or, for a tuple, one of its elements).
        let last = best.results.iter().max().copied().unwrap_or(0);
        let singles = if best.tuple { last + 1 } else { last };
        let earlier = (0..singles).map(|k| rerooted(&best, k, arrays[k].dims.len()));
        let layouts = std::iter::once(plain_layouts(&best, None))
            .chain((0..best.steps.len()).map(|k| plain_layouts(&best, Some(k))))
            .filter(|c| format!("{c:?}") != format!("{best:?}"));
        let smaller = m
            .first_failing(earlier)
            .or_else(|| m.first_failing(cuts(&best).into_iter()))
            .or_else(|| m.first_failing(layouts))
            .or_else(|| m.first_failing(simpler_values(&best).into_iter()));
        match smaller {
            Some(smaller) => best = smaller,
            None => break,
        }
    }
    best
}
