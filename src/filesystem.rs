//! The filesystems of this host, as `statvfs(3)` shows them: the one call of it, for the
//! free space a bound is taken from (the replication slot's) and a read-only mount named in
//! an error (an embedded database's file).

use std::path::Path;

/// `statvfs(3)` of the filesystem holding `path`; `None` when it cannot be read.
fn statvfs(path: &Path) -> Option<libc::statvfs> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: c is a NUL-terminated path and st points to enough space for a statvfs.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled the struct.
    Some(unsafe { st.assume_init() })
}

/// Bytes free to an unprivileged writer on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    statvfs(path).map(|st| st.f_bavail.saturating_mul(st.f_frsize))
}

/// Whether the filesystem holding `path` is mounted read-only (`false` when unknown).
pub fn is_read_only(path: &Path) -> bool {
    statvfs(path).is_some_and(|st| st.f_flag & libc::ST_RDONLY != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temp_dir_has_free_space_and_is_writable() {
        let tmp = std::env::temp_dir();
        assert!(free_bytes(&tmp).is_some());
        assert!(!is_read_only(&tmp));
        assert_eq!(free_bytes(Path::new("/no/such/dir/anywhere")), None);
    }
}
