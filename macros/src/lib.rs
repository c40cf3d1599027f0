//! The `shape!` proc-macro of lazy-xla: shapes written in XLA's own notation.
//!
//! Use it through `lazy_xla::shape!`; see that re-export for examples.

use proc_macro::TokenStream;
use proc_macro2::{Delimiter, Span, TokenStream as TokenStream2, TokenTree};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, LitInt, Token};

/// XLA's element type names and the `ElementType` variants they stand for.
const ELEMENT_TYPES: [(&str, &str); 13] = [
    ("pred", "Pred"),
    ("s8", "S8"),
    ("s16", "S16"),
    ("s32", "S32"),
    ("s64", "S64"),
    ("u8", "U8"),
    ("u16", "U16"),
    ("u32", "U32"),
    ("u64", "U64"),
    ("f16", "F16"),
    ("bf16", "Bf16"),
    ("f32", "F32"),
    ("f64", "F64"),
];

/// A shape in XLA's notation: `shape!(f32[2, 3])`, `shape!(f32[2, 3]{0, 1})`, `shape!(s32[])`,
/// `shape!(f32[n, 4])`.
///
/// Dimensions are any integer expressions (converted with `as i64`); the layout, if given, is
/// a list of integer literals, checked at compile time to be a permutation of `0..rank`. An
/// unknown element type or a bad layout is a compile error pointing at the culprit. A negative
/// size computed at run time panics, as `Shape::new` does.
#[proc_macro]
pub fn shape(input: TokenStream) -> TokenStream {
    match syn::parse::<ShapeLiteral>(input).and_then(ShapeLiteral::expand) {
        Ok(tokens) => tokens.into(),
        // In braces: several `compile_error!`s side by side are statements of a block, not one
        // malformed expression (which rustc would report with confusing errors of its own).
        Err(error) => {
            let errors = error.to_compile_error();
            quote!({ #errors }).into()
        }
    }
}

/// `type [dims] {layout}?` as written inside `shape!(…)`.
struct ShapeLiteral {
    element_type: Ident,
    dimensions: Vec<Expr>,
    dimensions_span: Span,
    layout: Option<(Vec<LitInt>, Span)>,
}

impl Parse for ShapeLiteral {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let element_type: Ident = input.parse()?;
        let (dimensions, dimensions_span) = input.step(|cursor| match cursor.token_tree() {
            Some((TokenTree::Group(group), rest)) if group.delimiter() == Delimiter::Bracket => {
                Ok(((group.stream(), group.span()), rest))
            }
            _ => Err(cursor.error("expected the dimension sizes in brackets, as in `f32[2, 3]`")),
        })?;
        let dimensions = parse_list::<Expr>(dimensions)?;
        let layout = if input.is_empty() {
            None
        } else {
            let (layout, span) = input.step(|cursor| match cursor.token_tree() {
                Some((TokenTree::Group(group), rest)) if group.delimiter() == Delimiter::Brace => {
                    Ok(((group.stream(), group.span()), rest))
                }
                _ => Err(cursor.error("expected a layout in braces, as in `f32[2, 3]{0, 1}`, or nothing")),
            })?;
            Some((parse_list::<LitInt>(layout)?, span))
        };
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the shape"));
        }
        Ok(ShapeLiteral { element_type, dimensions, dimensions_span, layout })
    }
}

/// Comma-separated `T`s (a trailing comma allowed).
fn parse_list<T: Parse>(tokens: TokenStream2) -> syn::Result<Vec<T>> {
    let list = syn::parse::Parser::parse2(Punctuated::<T, Token![,]>::parse_terminated, tokens)?;
    Ok(list.into_iter().collect())
}

impl ShapeLiteral {
    fn expand(self) -> syn::Result<TokenStream2> {
        let name = self.element_type.to_string();
        let Some((_, variant)) = ELEMENT_TYPES.iter().find(|(xla, _)| *xla == name) else {
            let names: Vec<&str> = ELEMENT_TYPES.iter().map(|(xla, _)| *xla).collect();
            return Err(syn::Error::new(
                self.element_type.span(),
                format!("unknown element type `{name}`; expected one of {}", names.join(", ")),
            ));
        };
        let variant = Ident::new(variant, self.element_type.span());
        let dimensions = &self.dimensions;
        let rank = dimensions.len();
        let minor_to_major = match &self.layout {
            None => (0..rank as i64).rev().collect(),
            Some((layout, span)) => check_permutation(layout, *span, rank, self.dimensions_span)?,
        };
        Ok(quote! {
            ::lazy_xla::Shape::with_layout(
                ::lazy_xla::ElementType::#variant,
                &[#((#dimensions) as i64),*],
                &[#(#minor_to_major),*],
            )
            .unwrap_or_else(|error| ::core::panic!("shape!: {}", error))
        })
    }
}

/// The layout's numbers, if they are a permutation of `0..rank`; else an error on the culprit.
fn check_permutation(
    layout: &[LitInt],
    span: Span,
    rank: usize,
    dimensions_span: Span,
) -> syn::Result<Vec<i64>> {
    if layout.len() != rank {
        let mut error = syn::Error::new(
            span,
            format!(
                "minor_to_major has {} entries but the shape has rank {rank}: a layout lists every dimension once",
                layout.len()
            ),
        );
        error.combine(syn::Error::new(dimensions_span, format!("the shape's {rank} dimensions")));
        return Err(error);
    }
    let mut seen = vec![false; rank];
    let mut minor_to_major = Vec::with_capacity(rank);
    for literal in layout {
        let dim: i64 = literal.base10_parse()?;
        if dim < 0 || dim >= rank as i64 {
            return Err(syn::Error::new(
                literal.span(),
                format!("dimension {dim} is out of range: minor_to_major must be a permutation of 0..{rank}"),
            ));
        }
        if std::mem::replace(&mut seen[dim as usize], true) {
            return Err(syn::Error::new(
                literal.span(),
                format!("dimension {dim} appears twice: minor_to_major must be a permutation of 0..{rank}"),
            ));
        }
        minor_to_major.push(dim);
    }
    Ok(minor_to_major)
}
