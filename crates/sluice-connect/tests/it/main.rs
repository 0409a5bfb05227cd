//! The generated forms, parsed back by real parsers of their formats, and the writer on real
//! temp files.

mod autorun;
mod clients;
mod edits;
mod forms;
mod health;
mod schema;
