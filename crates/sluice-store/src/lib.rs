//! sluice-store
