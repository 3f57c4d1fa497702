//! The scripted mock engine (strata-wire C-A2, C-M2): each pass replays the next script byte by byte,
//! then `<|im_end|>`; the last script repeats. With `restart_per_request` the scripts start again for each
//! request, so a load test can run the same tool round over and over; a request whose `model` names one
//! of `script_sets` replays that set instead (SPEC 4.9).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Engine, GenerateRequest, Generation};
use crate::config::EngineSettings;
use crate::tokenizer::{IM_END, encode};

const KEPT_PROMPTS: usize = 16;

/// One list of scripts and how far it has got.
struct Scripts {
    ids: Vec<Arc<Vec<u32>>>,
    thinks: Vec<bool>,
    passes: AtomicUsize,
}

impl Scripts {
    fn new(scripts: &[String]) -> Self {
        let mut ids: Vec<Arc<Vec<u32>>> = scripts
            .iter()
            .map(|s| {
                let mut ids = encode(s);
                ids.push(IM_END);
                Arc::new(ids)
            })
            .collect();
        if ids.is_empty() {
            ids.push(Arc::new(vec![IM_END]));
        }
        Self { ids, thinks: scripts.iter().map(|s| s.contains("</think>")).collect(), passes: AtomicUsize::new(0) }
    }
}

/// Replays scripts.
pub struct MockEngine {
    default: Scripts,
    sets: HashMap<String, Scripts>,
    delay: Duration,
    restart_per_request: bool,
    prompts: Mutex<VecDeque<Arc<Vec<u32>>>>,
    embeddings: Mutex<VecDeque<Vec<Arc<crate::vision::Embeddings>>>>,
}

impl MockEngine {
    /// An engine for these settings.
    pub fn new(settings: &EngineSettings) -> Self {
        Self {
            default: Scripts::new(&settings.scripts),
            sets: settings.script_sets.iter().map(|(name, scripts)| (name.clone(), Scripts::new(scripts))).collect(),
            delay: Duration::from_millis(settings.delay_ms),
            restart_per_request: settings.restart_per_request,
            prompts: Mutex::new(VecDeque::new()),
            embeddings: Mutex::new(VecDeque::new()),
        }
    }

    fn pick(&self, request: &GenerateRequest) -> (Arc<Vec<u32>>, bool) {
        let scripts = request.model.as_ref().and_then(|m| self.sets.get(m)).unwrap_or(&self.default);
        let pass = if self.restart_per_request {
            request.pass_in_request
        } else {
            scripts.passes.fetch_add(1, Ordering::Relaxed)
        };
        let which = pass.min(scripts.ids.len() - 1);
        (Arc::clone(&scripts.ids[which]), scripts.thinks.get(which).copied().unwrap_or(false))
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
        if let Ok(mut embeddings) = self.embeddings.lock() {
            if embeddings.len() == KEPT_PROMPTS {
                embeddings.pop_front();
            }
            embeddings.push_back(request.embeddings.clone());
        }
        let (script, starts_in_reasoning) = self.pick(&request);
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
        Generation { starts_in_reasoning, tokens }
    }

    fn recent_prompts(&self) -> Vec<Arc<Vec<u32>>> {
        self.prompts.lock().map(|p| p.iter().cloned().collect()).unwrap_or_default()
    }

    fn recent_embeddings(&self) -> Vec<Vec<Arc<crate::vision::Embeddings>>> {
        self.embeddings.lock().map(|e| e.iter().cloned().collect()).unwrap_or_default()
    }
}
