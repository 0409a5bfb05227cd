//! Integration tests for the file tools over real temp folders, real links and a real race.

mod attacks;
mod autorun;
mod mutate;
mod race;
mod rig;
mod schema;
mod tools;
