//! From the text's computations to the IR: called computations resolved by name (in any
//! order, each built once and shared), instructions put in topological order (the text may
//! list them in any order), every instruction checked by the shape inference the builder uses
//! (`hlo::infer`), so a module that lies about a shape is refused with XLA's sentence at the
//! instruction's `line:column`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::attributes::{BinaryOp, ComparisonDirection};
use crate::element_type::ElementType;
use crate::error::Result;
use crate::hlo::infer::infer_shape;
use crate::hlo::ir::{HloComputation, Instruction, InstructionId, Opcode};
use crate::hlo::parse::attributes::Attributes;
use crate::hlo::parse::cursor::error_at;
use crate::hlo::parse::instruction::{Operands, RawInstruction};
use crate::hlo::parse::lexer::Token;
use crate::hlo::parse::module::RawComputation;
use crate::hlo::parse::opcodes::{meaning, Meaning};
use crate::literal::Literal;
use crate::shape::Shape;

/// Computations call each other at most this deep (a bound on recursion).
const MAX_CALL_DEPTH: usize = 256;

/// The entry computation (the one marked `ENTRY`, else the last), with everything it calls.
/// Every computation of the module is built, so an error in an uncalled one is reported too.
pub(super) fn build_module(raw: &[RawComputation<'_>]) -> Result<HloComputation> {
    let mut by_name = HashMap::new();
    for (index, computation) in raw.iter().enumerate() {
        if by_name.insert(computation.name.text, index).is_some() {
            let message = format!("computation {} is defined twice", computation.name.text);
            return Err(error_at(&computation.name, message));
        }
    }
    let mut entries = raw.iter().enumerate().filter(|(_, c)| c.is_entry);
    let entry = entries.next().map_or(raw.len() - 1, |(index, _)| index);
    if let Some((_, second)) = entries.next() {
        return Err(error_at(&second.name, "the module has a second ENTRY computation"));
    }
    let mut module = Module { raw, by_name, built: vec![None; raw.len()], visiting: vec![false; raw.len()] };
    for index in 0..raw.len() {
        module.computation(index, 0)?;
    }
    let entry = module.built[entry].take().expect("every computation was built");
    Ok(Arc::unwrap_or_clone(entry))
}

/// The computations built so far, by their position in the text.
struct Module<'t, 'a> {
    raw: &'t [RawComputation<'a>],
    by_name: HashMap<&'a str, usize>,
    built: Vec<Option<Arc<HloComputation>>>,
    /// Computations being built (a call back into one is a cycle).
    visiting: Vec<bool>,
}

impl<'a> Module<'_, 'a> {
    /// The computation named by `token`, built if it is not yet.
    fn computation_named(&mut self, token: Token<'a>, depth: usize) -> Result<Arc<HloComputation>> {
        let Some(&index) = self.by_name.get(token.text) else {
            return Err(error_at(&token, format!("computation {} is not defined in the module", token.text)));
        };
        if self.visiting[index] {
            return Err(error_at(&token, format!("computation {} calls itself", token.text)));
        }
        if depth > MAX_CALL_DEPTH {
            return Err(error_at(
                &token,
                format!("computations call each other more than {MAX_CALL_DEPTH} deep"),
            ));
        }
        self.computation(index, depth)
    }

    fn computation(&mut self, index: usize, depth: usize) -> Result<Arc<HloComputation>> {
        if let Some(built) = &self.built[index] {
            return Ok(built.clone());
        }
        self.visiting[index] = true;
        let raw = self.raw;
        let built = Arc::new(self.build(&raw[index], depth)?);
        self.visiting[index] = false;
        self.built[index] = Some(built.clone());
        Ok(built)
    }

    /// Builds one computation.
    fn build(&mut self, raw: &RawComputation<'a>, depth: usize) -> Result<HloComputation> {
        let (order, operand_indices) = topological_order(raw)?;
        let mut arena = Arena::default();
        // Where each instruction of the text is in the arena.
        let mut placed: Vec<InstructionId> = vec![0; raw.instructions.len()];
        for index in order {
            let instruction = &raw.instructions[index];
            let operands: Vec<InstructionId> = operand_indices[index].iter().map(|&o| placed[o]).collect();
            let meaning = {
                let mut resolve = |token: Token<'a>| self.computation_named(token, depth + 1);
                let mut attributes =
                    Attributes::new(instruction.opcode, &instruction.attributes, &mut resolve);
                let meaning = match &instruction.operands {
                    Operands::Parameter(number) => Meaning::Op(Opcode::Parameter { number: *number }),
                    Operands::Constant(literal) => Meaning::Op(Opcode::Constant(Arc::new(literal.clone()))),
                    Operands::Names(_) => meaning(&instruction.opcode, &mut attributes)?,
                };
                attributes.finish()?;
                meaning
            };
            placed[index] = arena.place(instruction, meaning, &operands)?;
        }
        check_parameters(raw)?;
        let mut roots = raw.instructions.iter().enumerate().filter(|(_, i)| i.is_root);
        let root = roots.next().map_or(raw.instructions.len() - 1, |(index, _)| index);
        if let Some((_, second)) = roots.next() {
            return Err(error_at(&second.name, format!("computation {} has a second ROOT", raw.name.text)));
        }
        Ok(HloComputation {
            name: raw.name.text.to_string(),
            instructions: arena.instructions,
            root: placed[root],
        })
    }
}

/// The instructions' positions in the text, operands before users (text order where it
/// allows), and each one's operands' positions; an undefined operand, a name defined twice or
/// a cycle is an error.
fn topological_order(raw: &RawComputation<'_>) -> Result<(Vec<usize>, Vec<Vec<usize>>)> {
    let count = raw.instructions.len();
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(count);
    for (index, instruction) in raw.instructions.iter().enumerate() {
        if by_name.insert(instruction.name.text, index).is_some() {
            let message = format!("instruction {} is defined twice", instruction.name.text);
            return Err(error_at(&instruction.name, message));
        }
    }
    let operands = raw
        .instructions
        .iter()
        .map(|instruction| {
            let Operands::Names(names) = &instruction.operands else { return Ok(Vec::new()) };
            names
                .iter()
                .map(|name| {
                    by_name.get(name.text).copied().ok_or_else(|| {
                        let message = format!(
                            "instruction {} is not defined in computation {}",
                            name.text, raw.name.text
                        );
                        error_at(name, message)
                    })
                })
                .collect()
        })
        .collect::<Result<Vec<Vec<usize>>>>()?;
    // 0: not seen, 1: its operands are being placed, 2: placed.
    let mut state = vec![0u8; count];
    let mut order = Vec::with_capacity(count);
    for start in 0..count {
        let mut stack = vec![(start, false)];
        while let Some((index, expanded)) = stack.pop() {
            match (state[index], expanded) {
                (2, _) => {}
                (_, true) => {
                    state[index] = 2;
                    order.push(index);
                }
                (1, false) => {
                    let name = &raw.instructions[index].name;
                    return Err(error_at(name, format!("instruction {} depends on itself", name.text)));
                }
                _ => {
                    state[index] = 1;
                    stack.push((index, true));
                    for &operand in operands[index].iter().rev() {
                        if state[operand] != 2 {
                            stack.push((operand, false));
                        }
                    }
                }
            }
        }
    }
    Ok((order, operands))
}

/// Parameter numbers run 0, 1, … without gaps or repeats.
fn check_parameters(raw: &RawComputation<'_>) -> Result<()> {
    let mut numbers: Vec<(i64, &Token<'_>)> = raw
        .instructions
        .iter()
        .filter_map(|i| match i.operands {
            Operands::Parameter(number) => Some((number, &i.opcode)),
            _ => None,
        })
        .collect();
    numbers.sort_by_key(|(number, _)| *number);
    for (expected, (number, token)) in numbers.iter().enumerate() {
        if *number != expected as i64 {
            let message = match number < &(expected as i64) {
                true => format!("parameter number {number} is given twice in computation {}", raw.name.text),
                false => format!("parameter number {expected} is missing from computation {}", raw.name.text),
            };
            return Err(error_at(token, message));
        }
    }
    Ok(())
}

/// The instructions made so far, and their names.
#[derive(Default)]
struct Arena {
    instructions: Vec<Instruction>,
    names: HashSet<String>,
}

impl Arena {
    /// Places what `raw` means over `operands`; returns where its value is.
    fn place(
        &mut self,
        raw: &RawInstruction<'_>,
        meaning: Meaning,
        operands: &[InstructionId],
    ) -> Result<InstructionId> {
        let declared = &raw.shape;
        let name = raw.name.text;
        match meaning {
            Meaning::Op(opcode) => self.push(opcode, operands, declared.clone(), name.to_string(), &raw.name),
            Meaning::Copy => {
                let operand = self.single_operand(raw, operands)?;
                let shape = &self.instructions[operand].shape;
                if !shape.same_dimensions_and_type(declared) {
                    let message = format!(
                        "{} keeps its operand's shape: {} is not {}",
                        raw.opcode.text,
                        shape.human_string(),
                        declared.human_string()
                    );
                    return Err(error_at(&raw.name, message));
                }
                if shape == declared || shape.is_tuple() {
                    return Ok(operand);
                }
                self.push(Opcode::Reshape, &[operand], declared.clone(), name.to_string(), &raw.name)
            }
            Meaning::Bitcast => self.bitcast(raw, operands),
            Meaning::TotalOrderCompare(direction) => self.total_order_compare(raw, direction, operands),
        }
    }

    /// `compare` with `type=TOTALORDER`: float operands compared as XLA's total-order keys (the
    /// bits as a signed integer, the magnitude bits flipped where the sign is set), which order
    /// `-NaN < -∞ < … < -0 < +0 < … < ∞ < NaN`; other types compare as they are.
    fn total_order_compare(
        &mut self,
        raw: &RawInstruction<'_>,
        direction: ComparisonDirection,
        operands: &[InstructionId],
    ) -> Result<InstructionId> {
        let name = raw.name.text;
        let at = &raw.name;
        let float = operands.first().is_some_and(|&o| {
            let shape = &self.instructions[o].shape;
            !shape.is_tuple() && shape.element_type().is_float()
        });
        if !float || operands.len() != 2 {
            return self.push(Opcode::Compare(direction), operands, raw.shape.clone(), name.to_string(), at);
        }
        let shape = self.instructions[operands[0]].shape.clone();
        let (int_type, zero, max) = match shape.element_type().byte_size() {
            2 => (ElementType::S16, Literal::scalar(0i16), Literal::scalar(i16::MAX)),
            4 => (ElementType::S32, Literal::scalar(0i32), Literal::scalar(i32::MAX)),
            _ => (ElementType::S64, Literal::scalar(0i64), Literal::scalar(i64::MAX)),
        };
        let bits_shape = shape.with_element_type(int_type);
        let pred_shape = shape.with_element_type(ElementType::Pred);
        let splat = |arena: &mut Self, literal: Literal, what: &str| -> Result<InstructionId> {
            let constant_name = arena.fresh(&format!("{name}.{what}"));
            let scalar = Shape::scalar(int_type);
            let constant = arena.push(Opcode::Constant(Arc::new(literal)), &[], scalar, constant_name, at)?;
            let broadcast_name = arena.fresh(&format!("{name}.{what}.broadcast"));
            let broadcast = Opcode::Broadcast { dimensions: Vec::new() };
            arena.push(broadcast, &[constant], bits_shape.clone(), broadcast_name, at)
        };
        let zero = splat(self, zero, "zero")?;
        let max = splat(self, max, "max")?;
        let mut keys = Vec::new();
        for &operand in operands {
            let bits_name = self.fresh(&format!("{name}.bits"));
            let bits = self.push(Opcode::BitcastConvert, &[operand], bits_shape.clone(), bits_name, at)?;
            let negative_name = self.fresh(&format!("{name}.negative"));
            let less = Opcode::Compare(ComparisonDirection::Lt);
            let negative = self.push(less, &[bits, zero], pred_shape.clone(), negative_name, at)?;
            let flipped_name = self.fresh(&format!("{name}.flipped"));
            let xor = Opcode::Binary(BinaryOp::Xor);
            let flipped = self.push(xor, &[bits, max], bits_shape.clone(), flipped_name, at)?;
            let key_name = self.fresh(&format!("{name}.key"));
            keys.push(self.push(
                Opcode::Select,
                &[negative, flipped, bits],
                bits_shape.clone(),
                key_name,
                at,
            )?);
        }
        self.push(Opcode::Compare(direction), &keys, raw.shape.clone(), name.to_string(), at)
    }

    /// `bitcast`: the operand's memory (in its layout) read as the declared shape (in its
    /// layout): a transpose into memory order, a reshape, a transpose out of it (steps that
    /// do nothing left out), after a `bitcast-convert` if the element type changes.
    fn bitcast(&mut self, raw: &RawInstruction<'_>, operands: &[InstructionId]) -> Result<InstructionId> {
        let declared = &raw.shape;
        let mut current = self.single_operand(raw, operands)?;
        let from = self.instructions[current].shape.clone();
        let fits = !from.is_tuple()
            && !declared.is_tuple()
            && from.element_count() == declared.element_count()
            && from.element_type().byte_size() == declared.element_type().byte_size();
        if !fits {
            let message = format!(
                "bitcast keeps its operand's byte size and element width: {from} cannot be read as {declared}"
            );
            return Err(error_at(&raw.name, message));
        }
        if from.element_type() != declared.element_type() {
            let converted = from.with_element_type(declared.element_type());
            let name = self.fresh(&format!("{}.convert", raw.name.text));
            current = self.push(Opcode::BitcastConvert, &[current], converted, name, &raw.name)?;
        }
        let memory_order =
            |shape: &Shape| -> Vec<i64> { shape.layout().minor_to_major().iter().rev().copied().collect() };
        let (from_order, to_order) = (memory_order(&from), memory_order(declared));
        let identity = |permutation: &[i64]| permutation.iter().enumerate().all(|(i, &p)| p == i as i64);
        if !identity(&from_order) {
            let dimensions: Vec<i64> = from_order.iter().map(|&d| from.dimensions()[d as usize]).collect();
            let shape = Shape::try_new(declared.element_type(), &dimensions)
                .map_err(|e| error_at(&raw.name, e.to_string()))?;
            let name = self.fresh(&format!("{}.memory_order", raw.name.text));
            current =
                self.push(Opcode::Transpose { permutation: from_order }, &[current], shape, name, &raw.name)?;
        }
        let to_dimensions: Vec<i64> = to_order.iter().map(|&d| declared.dimensions()[d as usize]).collect();
        if identity(&to_order) {
            return self.push(
                Opcode::Reshape,
                &[current],
                declared.clone(),
                raw.name.text.to_string(),
                &raw.name,
            );
        }
        if self.instructions[current].shape.dimensions() != to_dimensions {
            let shape = Shape::try_new(declared.element_type(), &to_dimensions)
                .map_err(|e| error_at(&raw.name, e.to_string()))?;
            let name = self.fresh(&format!("{}.reshape", raw.name.text));
            current = self.push(Opcode::Reshape, &[current], shape, name, &raw.name)?;
        }
        let mut inverse = vec![0i64; to_order.len()];
        for (position, &dimension) in to_order.iter().enumerate() {
            inverse[dimension as usize] = position as i64;
        }
        let name = raw.name.text.to_string();
        self.push(Opcode::Transpose { permutation: inverse }, &[current], declared.clone(), name, &raw.name)
    }

    fn single_operand(&self, raw: &RawInstruction<'_>, operands: &[InstructionId]) -> Result<InstructionId> {
        match operands {
            [operand] => Ok(*operand),
            _ => Err(error_at(
                &raw.name,
                format!("{} takes 1 operand but has {}", raw.opcode.text, operands.len()),
            )),
        }
    }

    /// `base`, or `base.N` if an instruction has that name.
    fn fresh(&self, base: &str) -> String {
        let mut name = base.to_string();
        let mut counter = 0;
        while self.names.contains(&name) {
            counter += 1;
            name = format!("{base}.{counter}");
        }
        name
    }

    /// Appends an instruction after checking its shape against shape inference.
    fn push(
        &mut self,
        opcode: Opcode,
        operands: &[InstructionId],
        shape: Shape,
        name: String,
        at: &Token<'_>,
    ) -> Result<InstructionId> {
        let operand_shapes: Vec<&Shape> = operands.iter().map(|&o| &self.instructions[o].shape).collect();
        let inferred =
            infer_shape(&opcode, &operand_shapes, &shape).map_err(|e| error_at(at, e.to_string()))?;
        if !inferred.same_dimensions_and_type(&shape) {
            let message = format!(
                "Expected instruction to have shape equal to {}, actual shape is {}",
                inferred.human_string(),
                shape.human_string()
            );
            return Err(error_at(at, message));
        }
        if !self.names.insert(name.clone()) {
            return Err(error_at(at, format!("instruction {name} is defined twice")));
        }
        self.instructions.push(Instruction { opcode, operands: operands.to_vec(), shape, name });
        Ok(self.instructions.len() - 1)
    }
}
