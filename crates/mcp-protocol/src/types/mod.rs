//! Types for every definition in schema 2026-07-28.
