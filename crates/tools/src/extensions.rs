//! Tool-specific state on a [`ToolContext`](crate::ToolContext), by type: TodoWrite's list,
//! Bash's background shells, WebFetch's summarizer, and whatever MCP or the Agent tool add,
//! without the generic context knowing any of them.
//!
//! Clones of a context share one map (the session's state); a fork starts from what each
//! value's [`ContextExtension::fork`] says, so its todo list and background shells are its own
//! while the summarizer is shared (design.md "One fork").

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// State a tool keeps on the context. Implemented by the type the tool stores.
pub trait ContextExtension: Any + Send + Sync {
    /// The value a fork's context starts with; `None` leaves the fork without one (a type
    /// taken with [`ToolContext::ext_or_default`](crate::ToolContext::ext_or_default) then
    /// starts afresh there).
    fn fork(&self) -> Option<Self>
    where
        Self: Sized;
}

type AnyValue = Arc<dyn Any + Send + Sync>;

#[derive(Clone)]
struct Entry {
    value: AnyValue,
    fork: fn(&AnyValue) -> Option<AnyValue>,
    type_name: &'static str,
}

fn fork_entry<T: ContextExtension>(value: &AnyValue) -> Option<AnyValue> {
    let value = value.downcast_ref::<T>()?;
    value.fork().map(|forked| Arc::new(forked) as AnyValue)
}

impl Entry {
    fn new<T: ContextExtension>(value: Arc<T>) -> Self {
        Entry {
            value,
            fork: fork_entry::<T>,
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// The typed map behind [`ToolContext`](crate::ToolContext)'s extensions: the shared map,
/// plus values scoped to one call (what the loop hands a single tool call, such as the turn in
/// progress), seen only by that call's context and never by a fork.
#[derive(Clone, Default)]
pub(crate) struct Extensions {
    shared: Arc<Mutex<HashMap<TypeId, Entry>>>,
    call: Option<Arc<HashMap<TypeId, AnyValue>>>,
}

impl Extensions {
    fn map(&self) -> MutexGuard<'_, HashMap<TypeId, Entry>> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn get<T: ContextExtension>(&self) -> Option<Arc<T>> {
        if let Some(value) = self.call.as_ref().and_then(|c| c.get(&TypeId::of::<T>())) {
            return value.clone().downcast::<T>().ok();
        }
        let value = self.map().get(&TypeId::of::<T>())?.value.clone();
        value.downcast::<T>().ok()
    }

    /// This map with `value` as its `T` for one call: the shared map stays shared (what the
    /// call inserts reaches every clone), `value` is seen only through the returned map.
    pub(crate) fn with_call_value<T: ContextExtension>(&self, value: T) -> Self {
        let mut call: HashMap<TypeId, AnyValue> = self.call.as_deref().cloned().unwrap_or_default();
        call.insert(TypeId::of::<T>(), Arc::new(value));
        Self {
            shared: Arc::clone(&self.shared),
            call: Some(Arc::new(call)),
        }
    }

    pub(crate) fn get_or_insert_with<T: ContextExtension>(
        &self,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        let mut map = self.map();
        let id = TypeId::of::<T>();
        if let Some(value) = map
            .get(&id)
            .and_then(|e| e.value.clone().downcast::<T>().ok())
        {
            return value;
        }
        let value = Arc::new(make());
        map.insert(id, Entry::new(value.clone()));
        value
    }

    pub(crate) fn insert<T: ContextExtension>(&self, value: T) {
        self.map()
            .insert(TypeId::of::<T>(), Entry::new(Arc::new(value)));
    }

    /// The map a fork starts with.
    pub(crate) fn fork(&self) -> Self {
        let forked = self
            .map()
            .iter()
            .filter_map(|(id, entry)| {
                let value = (entry.fork)(&entry.value)?;
                Some((
                    *id,
                    Entry {
                        value,
                        ..entry.clone()
                    },
                ))
            })
            .collect();
        // A call's own values describe the parent's call, never the fork's.
        Extensions {
            shared: Arc::new(Mutex::new(forked)),
            call: None,
        }
    }

    /// The stored types' names, sorted (for `Debug`).
    pub(crate) fn type_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.map().values().map(|e| e.type_name).collect();
        names.sort_unstable();
        names
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.type_names()).finish()
    }
}
