//! sluice-runner
