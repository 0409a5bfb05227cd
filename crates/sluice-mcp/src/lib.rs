//! sluice-mcp
