//! Errors of model loading and execution.

/// Result of a model operation.
pub type Result<T> = std::result::Result<T, NnError>;

/// Why a model could not be loaded or run. Every variant names what was wrong, so a user can
/// fix the file or the call; nothing is half-loaded after an error.
#[derive(Debug, thiserror::Error)]
pub enum NnError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A file was read but its content is not what the loader expects.
    #[error("{path}: {what}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong with it.
        what: String,
    },
    /// The model uses something Veil does not support (an op, an activation, a layout).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A call does not fit the model (wrong shape, too long a sequence, unknown token).
    #[error("invalid input: {0}")]
    Invalid(String),
    /// A value does not fit the fixed-point encoding.
    #[error("out of range: {0}")]
    Range(String),
    /// The secure run failed (network, abort after a failed check, ...).
    #[error(transparent)]
    Mpc(#[from] veil_mpc::MpcError),
}

impl NnError {
    pub(crate) fn format(path: &std::path::Path, what: impl Into<String>) -> Self {
        NnError::Format { path: path.display().to_string(), what: what.into() }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        NnError::Io { path: path.display().to_string(), source }
    }
}
