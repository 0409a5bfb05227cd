//! sluice-guard
