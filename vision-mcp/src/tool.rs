//! `analyze_image` (seed 003): validate everything first (a refusal consumes nothing), reserve one call
//! in the budget, ask the Responses API once, and answer with its observations. Errors are short texts
//! for the client that never carry a secret, a path, the prompt or an upstream body.

use std::path::PathBuf;
use std::sync::Arc;

use crate::budget::{Budget, BudgetError};
use crate::config::Settings;
use crate::images::{self, ImageError};
use crate::openai::{ClientError, Detail, OpenAi, UpstreamError};

/// The longest prompt accepted, in characters.
pub const MAX_PROMPT_CHARS: usize = 4000;

/// Why a call gave no observation: the text of the error result the client sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// `detail` is not one of the three.
    #[error("detail must be auto, low or high")]
    Detail,
    /// The prompt is blank.
    #[error("prompt must say what to look for")]
    EmptyPrompt,
    /// The prompt is too long.
    #[error("prompt is longer than {MAX_PROMPT_CHARS} characters")]
    LongPrompt,
    /// The picture was refused (name, place, kind, size).
    #[error(transparent)]
    Image(#[from] ImageError),
    /// Reading the picture failed outright.
    #[error("the picture could not be read")]
    Unreadable,
    /// The budget refused (limit reached, or the database unusable).
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// The budget's database could not be reached at all.
    #[error("the usage database cannot be used, so nothing was sent")]
    NoUsageDatabase,
    /// OpenAI failed or refused.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// The client cancelled the call.
    #[error("the call was cancelled")]
    Cancelled,
}

/// The tool's machinery.
#[derive(Debug, Clone)]
pub struct Analyzer {
    root: PathBuf,
    budget: Budget,
    openai: OpenAi,
}

impl Analyzer {
    /// An analyzer for these settings, sending to `base` (production: `openai::OPENAI_BASE`).
    pub fn new(settings: &Settings, base: &str) -> Result<Arc<Self>, ClientError> {
        Self::with_timeout(settings, base, crate::openai::TIMEOUT)
    }

    /// [`Analyzer::new`] with another upstream timeout than [`crate::openai::TIMEOUT`] (tests use a
    /// short one).
    pub fn with_timeout(
        settings: &Settings,
        base: &str,
        timeout: std::time::Duration,
    ) -> Result<Arc<Self>, ClientError> {
        let openai =
            OpenAi::with_timeout(base, &settings.openai_key, &settings.model, settings.max_output_tokens, timeout)?;
        let budget = Budget::new(&settings.usage_db, settings.max_calls_per_day, settings.max_calls_per_10_min);
        Ok(Arc::new(Self { root: settings.image_root.clone(), budget, openai }))
    }

    /// The budget (for the startup check and tests).
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Runs the tool. `Ok` is the observation text; `Err` the refusal or failure, for the client.
    pub async fn analyze(&self, image: &str, prompt: &str, detail: Option<&str>) -> Result<String, Refusal> {
        let detail = match detail {
            None | Some("") => Detail::Auto,
            Some(text) => Detail::parse(text).ok_or(Refusal::Detail)?,
        };
        let prompt = prompt.trim();
        if prompt.is_empty() {
            return Err(Refusal::EmptyPrompt);
        }
        if prompt.chars().count() > MAX_PROMPT_CHARS {
            return Err(Refusal::LongPrompt);
        }
        let (root, name) = (self.root.clone(), image.to_string());
        let prepared =
            tokio::task::spawn_blocking(move || images::read_inside(&root, &name).and_then(|b| images::prepare(&b)))
                .await
                .map_err(|_| Refusal::Unreadable)?
                .inspect_err(|e| {
                    if *e == images::ImageError::Permission {
                        // Logged (without the name: logs carry no paths), since the fix is on the NAS.
                        tracing::warn!("analyze_image refused: permission denied reading a picture or its folder");
                    }
                })?;
        let budget = self.budget.clone();
        tokio::task::spawn_blocking(move || budget.reserve()).await.map_err(|_| Refusal::NoUsageDatabase)??;
        let observation = self.openai.observe(prompt, &prepared.data_url, detail).await?;
        tracing::info!(
            input_tokens = observation.input_tokens,
            output_tokens = observation.output_tokens,
            "analyze_image answered"
        );
        Ok(observation.text)
    }
}
