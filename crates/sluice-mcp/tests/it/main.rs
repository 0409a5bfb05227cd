//! sluice-mcp's integration tests (one binary; each module a subject).

mod tools;
