//! JSON Schema polish: the shared transform that keeps integer schemas plain.

pub(crate) use sluice_core::schema::plain_integers;
