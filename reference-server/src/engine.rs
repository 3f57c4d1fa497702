//! The model engine boundary (strata-wire C-A4): prompt ids in, token ids out, cancellable. The
//! reference server ships only the scripted [`mock::MockEngine`]; a real engine would implement the same
//! trait.

pub mod mock;

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One engine pass.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// The prompt ids.
    pub prompt: Arc<Vec<u32>>,
    /// The most tokens to produce.
    pub max_new: usize,
    /// Which pass of the current request this is (0 for the first round).
    pub pass_in_request: usize,
    /// The model the request named (the mock engine picks a script set by it).
    pub model: Option<String>,
    /// The pictures' embeddings, in prompt order, when the vision backend computes them.
    pub embeddings: Vec<Arc<crate::vision::Embeddings>>,
}

/// A running pass: the tokens arrive on `tokens`; the channel closes when the pass ends.
pub struct Generation {
    /// Whether the output starts inside the reasoning (ends at `</think>`).
    pub starts_in_reasoning: bool,
    /// The produced ids; `<|im_end|>` is the last one of a pass that stopped by itself.
    pub tokens: mpsc::Receiver<u32>,
}

/// A model engine.
pub trait Engine: Send + Sync + 'static {
    /// Starts a pass. Cancelling `cancel` ends it at the next token.
    fn generate(&self, request: GenerateRequest, cancel: CancellationToken) -> Generation;

    /// The prompts of the most recent passes, oldest first (for tests that read what the model got).
    fn recent_prompts(&self) -> Vec<Arc<Vec<u32>>>;

    /// The embeddings of the most recent passes, oldest first.
    fn recent_embeddings(&self) -> Vec<Vec<Arc<crate::vision::Embeddings>>>;
}
