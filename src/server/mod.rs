//! Private server instances (stub).
