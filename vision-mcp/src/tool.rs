//! `analyze_image` (seed 003): validate everything first (a refusal consumes nothing), reserve one call
//! in the budget, ask the Responses API once, and answer with its observations. Errors are short texts
//! for the client that never carry a secret, a path, the prompt or an upstream body.

use std::path::PathBuf;
use std::sync::Arc;

use crate::budget::Budget;
use crate::config::Settings;
use crate::images;
use crate::openai::{Detail, OpenAi};

/// The longest prompt accepted, in characters.
pub const MAX_PROMPT_CHARS: usize = 4000;

/// The tool's machinery.
#[derive(Debug, Clone)]
pub struct Analyzer {
    root: PathBuf,
    budget: Budget,
    openai: OpenAi,
}

impl Analyzer {
    /// An analyzer for these settings, sending to `base` (production: `openai::OPENAI_BASE`).
    pub fn new(settings: &Settings, base: &str) -> Result<Arc<Self>, String> {
        let openai = OpenAi::new(base, &settings.openai_key, &settings.model, settings.max_output_tokens)?;
        let budget = Budget::new(&settings.usage_db, settings.max_calls_per_day, settings.max_calls_per_10_min);
        Ok(Arc::new(Self { root: settings.image_root.clone(), budget, openai }))
    }

    /// The budget (for the startup check and tests).
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Runs the tool. `Ok` is the observation text; `Err` the refusal or failure, for the client.
    pub async fn analyze(&self, image: &str, prompt: &str, detail: Option<&str>) -> Result<String, String> {
        let detail = match detail {
            None | Some("") => Detail::Auto,
            Some(text) => Detail::parse(text).ok_or("detail must be auto, low or high")?,
        };
        let prompt = prompt.trim();
        if prompt.is_empty() {
            return Err("prompt must say what to look for".into());
        }
        if prompt.chars().count() > MAX_PROMPT_CHARS {
            return Err(format!("prompt is longer than {MAX_PROMPT_CHARS} characters"));
        }
        let (root, name) = (self.root.clone(), image.to_string());
        let prepared =
            tokio::task::spawn_blocking(move || images::read_inside(&root, &name).and_then(|b| images::prepare(&b)))
                .await
                .map_err(|_| "the picture could not be read".to_string())?
                .map_err(|e| {
                    if e == images::ImageError::Permission {
                        // Logged (without the name: logs carry no paths), since the fix is on the NAS.
                        tracing::warn!("analyze_image refused: permission denied reading a picture or its folder");
                    }
                    e.to_string()
                })?;
        let budget = self.budget.clone();
        tokio::task::spawn_blocking(move || budget.reserve())
            .await
            .map_err(|_| "the usage database cannot be used, so nothing was sent".to_string())?
            .map_err(|e| e.to_string())?;
        let observation = self.openai.observe(prompt, &prepared.data_url, detail).await.map_err(|e| e.to_string())?;
        tracing::info!(
            input_tokens = observation.input_tokens,
            output_tokens = observation.output_tokens,
            "analyze_image answered"
        );
        Ok(observation.text)
    }
}
