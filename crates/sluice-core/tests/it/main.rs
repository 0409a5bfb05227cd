//! Properties of `sluice-core` checked exhaustively over their inputs' seams.

mod redaction;
