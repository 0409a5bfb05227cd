//! sluice-engine
