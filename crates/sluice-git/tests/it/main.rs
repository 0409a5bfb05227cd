//! The one integration-test binary of `sluice-git`: real repositories made with the real git
//! in temp folders, driven through the public API.

mod attacks;
mod emails;
mod injection;
mod open;
mod schema;
mod support;
mod tools;
mod worktrees;
mod writes;
