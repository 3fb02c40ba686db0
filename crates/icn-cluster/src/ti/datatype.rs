//! MPI datatypes as SimGrid's TI traces name them: a trace gives sizes in units of a
//! datatype, written as SimGrid 3.32's datatype id (`smpi_datatype.cpp`: 0 = MPI_DOUBLE,
//! 1 = MPI_INT, …, 6 = MPI_BYTE, …). The default datatype is MPI_BYTE, or MPI_DOUBLE after
//! an `init` with an argument (SimGrid's "MPE" traces; the shared 32-rank trace is one).

/// `(id, name, bytes)` of every datatype id SimGrid 3.32 defines (x86-64 sizes).
pub const DATATYPES: [(u8, &str, u8); 55] = [
    (0, "MPI_DOUBLE", 8),
    (1, "MPI_INT", 4),
    (2, "MPI_CHAR", 1),
    (3, "MPI_SHORT", 2),
    (4, "MPI_LONG", 8),
    (5, "MPI_FLOAT", 4),
    (6, "MPI_BYTE", 1),
    (7, "MPI_LONG_LONG", 8),
    (8, "MPI_SIGNED_CHAR", 1),
    (9, "MPI_UNSIGNED_CHAR", 1),
    (10, "MPI_UNSIGNED_SHORT", 2),
    (11, "MPI_UNSIGNED", 4),
    (12, "MPI_UNSIGNED_LONG", 8),
    (13, "MPI_UNSIGNED_LONG_LONG", 8),
    (14, "MPI_LONG_DOUBLE", 16),
    (15, "MPI_WCHAR", 4),
    (16, "MPI_C_BOOL", 1),
    (17, "MPI_INT8_T", 1),
    (18, "MPI_INT16_T", 2),
    (19, "MPI_INT32_T", 4),
    (20, "MPI_INT64_T", 8),
    (21, "MPI_UINT8_T", 1),
    (22, "MPI_UINT16_T", 2),
    (23, "MPI_UINT32_T", 4),
    (24, "MPI_UINT64_T", 8),
    (25, "MPI_C_FLOAT_COMPLEX", 8),
    (26, "MPI_C_DOUBLE_COMPLEX", 16),
    (27, "MPI_C_LONG_DOUBLE_COMPLEX", 32),
    (28, "MPI_AINT", 8),
    (29, "MPI_OFFSET", 8),
    (30, "MPI_FLOAT_INT", 8),
    (31, "MPI_LONG_INT", 16),
    (32, "MPI_DOUBLE_INT", 16),
    (33, "MPI_SHORT_INT", 8),
    (34, "MPI_2INT", 8),
    (35, "MPI_2FLOAT", 8),
    (36, "MPI_2DOUBLE", 16),
    (37, "MPI_2LONG", 16),
    (38, "MPI_REAL", 4),
    (39, "MPI_REAL4", 4),
    (40, "MPI_REAL8", 8),
    (41, "MPI_REAL16", 16),
    (42, "MPI_COMPLEX8", 8),
    (43, "MPI_COMPLEX16", 16),
    (44, "MPI_COMPLEX32", 16),
    (45, "MPI_INTEGER1", 4),
    (46, "MPI_INTEGER2", 2),
    (47, "MPI_INTEGER4", 4),
    (48, "MPI_INTEGER8", 8),
    (49, "MPI_INTEGER16", 16),
    (50, "MPI_LONG_DOUBLE_INT", 32),
    (51, "MPI_CXX_BOOL", 1),
    (52, "MPI_CXX_FLOAT_COMPLEX", 8),
    (53, "MPI_CXX_DOUBLE_COMPLEX", 16),
    (54, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32),
];

/// MPI_DOUBLE's and MPI_BYTE's sizes: the two default datatypes.
pub const DOUBLE: u64 = 8;
pub const BYTE: u64 = 1;

/// The size in bytes of datatype id `word`, or why not.
pub fn size_of(word: &str) -> Result<u64, String> {
    let id: usize = word.parse().map_err(|_| {
        format!("`{word}` is not a datatype id (0 ..= 54, SimGrid 3.32's numbering)")
    })?;
    DATATYPES
        .get(id)
        .map(|d| u64::from(d.2))
        .ok_or_else(|| format!("datatype id {id} is not one of 0 ..= 54"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_their_index_and_common_sizes_are_right() {
        for (i, d) in DATATYPES.iter().enumerate() {
            assert_eq!(usize::from(d.0), i);
        }
        assert_eq!(size_of("0"), Ok(8));
        assert_eq!(size_of("1"), Ok(4));
        assert_eq!(size_of("6"), Ok(1));
        assert!(size_of("55").unwrap_err().contains("0 ..= 54"));
        assert!(size_of("x").is_err());
    }
}
