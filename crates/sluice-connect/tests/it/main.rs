//! The generated forms, parsed back by real parsers of their formats, and the writer on real
//! temp files.

mod edits;
mod forms;
mod schema;
