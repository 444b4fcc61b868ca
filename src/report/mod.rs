//! Rendering results for people.

pub mod text;
