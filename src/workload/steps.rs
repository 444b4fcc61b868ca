//! Steps (filled in by the runner work).
