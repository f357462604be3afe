//! [`StateMap`]: the application state a server holds for the `State<T>` extractor.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Application state given to [`crate::ServerBuilder::state`], by type.
#[derive(Default, Clone)]
pub struct StateMap(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl std::fmt::Debug for StateMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateMap").field("entries", &self.0.len()).finish()
    }
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.0.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The state of type `T`, if given.
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.0.get(&TypeId::of::<T>()).and_then(|v| v.downcast_ref())
    }

    /// Whether state of type `T` was given.
    pub(crate) fn contains<T: 'static>(&self) -> bool {
        self.0.contains_key(&TypeId::of::<T>())
    }
}
