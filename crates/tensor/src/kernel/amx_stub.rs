//! AMX is only implemented for x86-64 Linux; elsewhere the token cannot exist.

use super::Word;
use crate::device::MatDims;

/// Proof of AMX support; uninhabited on this platform.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Amx {}

impl Amx {
    /// Always `None` here.
    pub(crate) fn new() -> Option<Self> {
        None
    }
}

/// Unreachable: no [`Amx`] value exists on this platform.
pub(crate) fn gemm<W: Word>(amx: Amx, _: &[W], _: &[W], _: &mut [W], _: MatDims) {
    match amx {}
}
