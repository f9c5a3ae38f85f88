//! 2-of-3 replicated secret sharing (RSS) over Z_2^ℓ.
//!
//! `x = a_0 + a_1 + a_2 (mod 2^ℓ)`; party `P_b` holds `⟨x⟩_b = (a_b, a_{b+1})` (indices mod 3),
//! so component `a_j` is known to `P_{j-1}` and `P_j`, and any two parties together know all
//! three. Consistency: `P_b`'s second component equals `P_{b+1}`'s first.
//! Linear operations are local: addition is component-wise; a public constant `c` is added to
//! `a_0` (held by `P_0` as first component and by `P_2` as second); multiplying by a public
//! constant scales both components.

use veil_mpc::{MpcError, PartyId, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

/// The next party in the ring of three.
pub fn next(b: PartyId) -> PartyId {
    (b + 1) % 3
}

/// The previous party in the ring of three.
pub fn prev(b: PartyId) -> PartyId {
    (b + 2) % 3
}

/// `round(c·2^k)`: a real constant with `k` fractional bits.
pub(crate) fn fixed(c: f64, k: u32) -> i64 {
    (c * 2f64.powi(k as i32)).round() as i64
}

/// The public `[n]` tensor with every entry `v` (a constant to add with [`Rss::add_public`]).
pub(crate) fn constant<T: Ring>(n: usize, v: i64) -> Tensor<T> {
    Tensor::full(&[n], T::from_i64(v))
}

/// An [`Rss`] as read from stored material, before its components' shapes are checked.
#[derive(serde::Deserialize)]
#[serde(bound = "R: Ring")]
struct RssParts<R> {
    first: Tensor<R>,
    second: Tensor<R>,
}

impl<R: Ring> TryFrom<RssParts<R>> for Rss<R> {
    type Error = MpcError;

    fn try_from(p: RssParts<R>) -> Result<Self> {
        Rss::new(p.first, p.second)
    }
}

/// One party's replicated share `(a_b, a_{b+1})` of a secret tensor.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Ring", try_from = "RssParts<R>")]
pub struct Rss<R> {
    /// `a_b`: shared with the previous party.
    pub first: Tensor<R>,
    /// `a_{b+1}`: shared with the next party.
    pub second: Tensor<R>,
}

impl<R: Ring> Rss<R> {
    /// A share from its two components, which must have the same shape.
    pub fn new(first: Tensor<R>, second: Tensor<R>) -> Result<Self> {
        if first.shape() != second.shape() {
            return Err(MpcError::Invalid(format!(
                "share components of shapes {:?} and {:?}",
                first.shape(),
                second.shape()
            )));
        }
        Ok(Rss { first, second })
    }

    /// The all-zero sharing (every component 0).
    pub fn zeros(shape: &[usize]) -> Self {
        Rss { first: Tensor::zeros(shape), second: Tensor::zeros(shape) }
    }

    /// Shape of the secret.
    pub fn shape(&self) -> &[usize] {
        self.first.shape()
    }

    /// Number of elements of the secret.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    /// Whether the secret has no element.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    /// `⟨x + y⟩`, local.
    pub fn add(&self, y: &Self) -> Result<Self> {
        Ok(Rss { first: self.first.add(&y.first)?, second: self.second.add(&y.second)? })
    }

    /// `⟨x - y⟩`, local.
    pub fn sub(&self, y: &Self) -> Result<Self> {
        Ok(Rss { first: self.first.sub(&y.first)?, second: self.second.sub(&y.second)? })
    }

    /// `⟨-x⟩`, local.
    pub fn neg(&self) -> Self {
        Rss { first: self.first.neg(), second: self.second.neg() }
    }

    /// `⟨c·x⟩` for a public scalar, local.
    pub fn scale(&self, c: R) -> Self {
        Rss { first: self.first.scale(c), second: self.second.scale(c) }
    }

    /// `⟨x ⊙ c⟩` for a public tensor, local.
    pub fn mul_public(&self, c: &Tensor<R>) -> Result<Self> {
        Ok(Rss { first: self.first.mul(c)?, second: self.second.mul(c)? })
    }

    /// `⟨x + c⟩` for a public tensor: `c` goes into component `a_0`, which is `P_0`'s first
    /// and `P_2`'s second component.
    pub fn add_public(&self, party: PartyId, c: &Tensor<R>) -> Result<Self> {
        let mut out = self.clone();
        match party {
            0 => out.first = out.first.add(c)?,
            2 => out.second = out.second.add(c)?,
            _ => {
                if c.shape() != self.shape() {
                    return Err(MpcError::Invalid(format!(
                        "adding a constant of shape {:?} to a secret of shape {:?}",
                        c.shape(),
                        self.shape()
                    )));
                }
            }
        }
        Ok(out)
    }

    /// `[rows]` → `[rows, k]`: each element repeated `k` times (a per-row value spread over
    /// its row), local.
    pub fn spread_rows(&self, k: usize) -> Result<Self> {
        let rep = |t: &Tensor<R>| {
            let d: Vec<R> = t.data().iter().flat_map(|&x| std::iter::repeat_n(x, k)).collect();
            Tensor::new(vec![t.len(), k], d)
        };
        Ok(Rss { first: rep(&self.first)?, second: rep(&self.second)? })
    }

    /// `[rows, k]` (any shape with `k` dividing the length) → `[rows]`: sums of consecutive
    /// groups of `k`, local.
    pub fn row_sums(&self, k: usize) -> Result<Self> {
        if k == 0 || !self.len().is_multiple_of(k) {
            return Err(MpcError::Invalid(format!("rows of {k} in {} elements", self.len())));
        }
        let sum = |t: &Tensor<R>| {
            let d: Vec<R> = t.data().chunks(k).map(|c| c.iter().copied().sum()).collect();
            Tensor::new(vec![d.len()], d)
        };
        Ok(Rss { first: sum(&self.first)?, second: sum(&self.second)? })
    }

    /// The same secret with another shape of the same number of elements, local.
    pub fn reshape(&self, shape: &[usize]) -> Result<Self> {
        Ok(Rss { first: self.first.clone().reshape(shape)?, second: self.second.clone().reshape(shape)? })
    }

    /// The concatenation of flattened sharings, as one `[Σ len]` sharing, local.
    pub fn concat(parts: &[&Self]) -> Result<Self> {
        let cat = |pick: fn(&Self) -> &Tensor<R>| {
            let d: Vec<R> = parts.iter().flat_map(|p| pick(p).data().iter().copied()).collect();
            Tensor::new(vec![d.len()], d)
        };
        Ok(Rss { first: cat(|p| &p.first)?, second: cat(|p| &p.second)? })
    }

    /// Elements `start .. start + len` of the flattened secret, as a `[len]` sharing, local.
    pub fn range(&self, start: usize, len: usize) -> Result<Self> {
        if start + len > self.len() {
            return Err(MpcError::Invalid(format!(
                "elements {start}..{} of a sharing of {}",
                start + len,
                self.len()
            )));
        }
        let cut = |t: &Tensor<R>| Tensor::new(vec![len], t.data()[start..start + len].to_vec());
        Ok(Rss { first: cut(&self.first)?, second: cut(&self.second)? })
    }

    /// Applies `f` to each component separately (both holders of a component compute the same
    /// value). This shares `Σ f(a_j)`, which is `f(x)` only for additive `f` (such as reduction
    /// to a smaller power-of-two ring); callers with other `f` say what they share.
    pub fn map_components<S: Ring>(&self, f: impl Fn(R) -> S) -> Rss<S> {
        Rss { first: self.first.map(|&v| f(v)), second: self.second.map(|&v| f(v)) }
    }

    /// Entries `range` along `axis` (both components sliced alike), local.
    pub fn slice(&self, axis: usize, range: std::ops::Range<usize>) -> Result<Self> {
        Ok(Rss { first: self.first.slice(axis, range.clone())?, second: self.second.slice(axis, range)? })
    }

    /// The transposed matrix, local.
    pub fn transpose(&self) -> Result<Self> {
        Ok(Rss { first: self.first.transpose()?, second: self.second.transpose()? })
    }

    /// Entries picked by flat index, `None` giving a sharing of 0 (both components 0), local.
    pub fn gather(&self, index: &[Option<usize>], shape: &[usize]) -> Result<Self> {
        Ok(Rss {
            first: self.first.gather(index, shape, R::ZERO)?,
            second: self.second.gather(index, shape, R::ZERO)?,
        })
    }

    /// Sharings joined along `axis` (shapes agreeing elsewhere), local.
    pub fn concat_axis(parts: &[&Self], axis: usize) -> Result<Self> {
        let first: Vec<&Tensor<R>> = parts.iter().map(|p| &p.first).collect();
        let second: Vec<&Tensor<R>> = parts.iter().map(|p| &p.second).collect();
        Ok(Rss { first: Tensor::concat(&first, axis)?, second: Tensor::concat(&second, axis)? })
    }
}
