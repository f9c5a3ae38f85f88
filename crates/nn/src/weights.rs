//! Named float tensors: a model's weights as the model owner holds them, read from
//! `model.safetensors` with the `safetensors` crate (the format's reference implementation,
//! which validates the header and offsets), converted to `f32` from F32, F16 or BF16.

use std::collections::BTreeMap;
use std::path::Path;

use safetensors::{Dtype, SafeTensors};

use crate::error::{NnError, Result};

/// A dense float tensor, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatTensor {
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Entries, row-major.
    pub data: Vec<f32>,
}

impl FloatTensor {
    /// A tensor; `data` must have as many entries as `shape` says.
    pub fn new(shape: Vec<usize>, data: Vec<f32>) -> Result<Self> {
        if shape.iter().product::<usize>() != data.len() {
            return Err(NnError::Invalid(format!("{} values for shape {shape:?}", data.len())));
        }
        Ok(FloatTensor { shape, data })
    }

    /// The transpose of a matrix.
    pub fn transposed(&self) -> Result<Self> {
        let [r, c] = self.shape[..] else {
            return Err(NnError::Invalid(format!("transpose of a tensor of shape {:?}", self.shape)));
        };
        let mut data = vec![0.0; r * c];
        for i in 0..r {
            for j in 0..c {
                data[j * r + i] = self.data[i * c + j];
            }
        }
        Ok(FloatTensor { shape: vec![c, r], data })
    }
}

/// Weights by name.
pub type Weights = BTreeMap<String, FloatTensor>;

/// Reads every floating-point tensor of a `.safetensors` file (integer tensors, such as
/// `position_ids` buffers, are skipped).
pub fn read_safetensors(path: &Path) -> Result<Weights> {
    let bytes = std::fs::read(path).map_err(|e| NnError::io(path, e))?;
    let st = SafeTensors::deserialize(&bytes).map_err(|e| NnError::format(path, e.to_string()))?;
    let mut out = Weights::new();
    for (name, view) in st.tensors() {
        let raw = view.data();
        let data: Vec<f32> = match view.dtype() {
            Dtype::F32 => raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
            Dtype::F16 => raw.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect(),
            Dtype::BF16 => raw
                .chunks_exact(2)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                .collect(),
            Dtype::I64 | Dtype::I32 | Dtype::I16 | Dtype::I8 | Dtype::U8 | Dtype::BOOL => continue,
            other => {
                return Err(NnError::format(
                    path,
                    format!("tensor {name}: dtype {other:?} is not supported"),
                ));
            }
        };
        out.insert(name, FloatTensor::new(view.shape().to_vec(), data)?);
    }
    Ok(out)
}

/// IEEE half to single precision.
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: renormalise.
            let shift = f.leading_zeros() - 21;
            sign | ((127 - 15 - shift + 1) << 23) | (((f << shift) & 0x3ff) << 13)
        }
        (0x1f, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 127 - 15) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_values() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
    }

    #[test]
    fn transposes() {
        let t = FloatTensor::new(vec![2, 3], vec![1., 2., 3., 4., 5., 6.]).unwrap();
        assert_eq!(t.transposed().unwrap().data, vec![1., 4., 2., 5., 3., 6.]);
    }

    #[test]
    fn corrupt_files_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("veil-nn-st-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("bad.safetensors");
        std::fs::write(&p, b"\x10\x00\x00\x00\x00\x00\x00\x00{not json").unwrap();
        let e = read_safetensors(&p).unwrap_err().to_string();
        assert!(e.contains("bad.safetensors"), "{e}");
        assert!(
            read_safetensors(&dir.join("missing.safetensors"))
                .unwrap_err()
                .to_string()
                .contains("cannot read")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
