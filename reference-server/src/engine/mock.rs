//! The scripted mock engine (strata-wire C-A2, C-M2): each pass replays the next script byte by byte,
//! then `<|im_end|>`; the last script repeats. With `restart_per_request` the scripts start again for each
//! request, so a load test can run the same tool round over and over.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Engine, GenerateRequest, Generation};
use crate::config::EngineSettings;
use crate::tokenizer::{IM_END, encode};

const KEPT_PROMPTS: usize = 16;

/// Replays scripts.
pub struct MockEngine {
    scripts: Vec<Arc<Vec<u32>>>,
    thinks: Vec<bool>,
    delay: Duration,
    restart_per_request: bool,
    passes: AtomicUsize,
    prompts: Mutex<VecDeque<Arc<Vec<u32>>>>,
}

impl MockEngine {
    /// An engine for these settings.
    pub fn new(settings: &EngineSettings) -> Self {
        let mut scripts: Vec<Arc<Vec<u32>>> = settings
            .scripts
            .iter()
            .map(|s| {
                let mut ids = encode(s);
                ids.push(IM_END);
                Arc::new(ids)
            })
            .collect();
        if scripts.is_empty() {
            scripts.push(Arc::new(vec![IM_END]));
        }
        Self {
            thinks: settings.scripts.iter().map(|s| s.contains("</think>")).collect(),
            scripts,
            delay: Duration::from_millis(settings.delay_ms),
            restart_per_request: settings.restart_per_request,
            passes: AtomicUsize::new(0),
            prompts: Mutex::new(VecDeque::new()),
        }
    }

    fn pick(&self, request: &GenerateRequest) -> usize {
        let pass = if self.restart_per_request {
            request.pass_in_request
        } else {
            self.passes.fetch_add(1, Ordering::Relaxed)
        };
        pass.min(self.scripts.len() - 1)
    }
}

impl Engine for MockEngine {
    fn generate(&self, request: GenerateRequest, cancel: CancellationToken) -> Generation {
        if let Ok(mut prompts) = self.prompts.lock() {
            if prompts.len() == KEPT_PROMPTS {
                prompts.pop_front();
            }
            prompts.push_back(Arc::clone(&request.prompt));
        }
        let which = self.pick(&request);
        let script = Arc::clone(&self.scripts[which]);
        let delay = self.delay;
        let (sender, tokens) = mpsc::channel(256);
        tokio::spawn(async move {
            for &id in script.iter().take(request.max_new.max(1)) {
                if cancel.is_cancelled() {
                    return;
                }
                if !delay.is_zero() {
                    tokio::select! {
                        () = cancel.cancelled() => return,
                        () = tokio::time::sleep(delay) => {}
                    }
                }
                tokio::select! {
                    () = cancel.cancelled() => return,
                    sent = sender.send(id) => if sent.is_err() { return },
                }
            }
        });
        Generation { starts_in_reasoning: self.thinks.get(which).copied().unwrap_or(false), tokens }
    }

    fn recent_prompts(&self) -> Vec<Arc<Vec<u32>>> {
        self.prompts.lock().map(|p| p.iter().cloned().collect()).unwrap_or_default()
    }
}
