use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A bounded channel made by a free function returning its two halves, as
/// `crossbeam_channel::bounded` is: neither half has a constructor of its own.
pub fn channel<T>(cap: usize) -> (Tx<T>, Rx<T>) {
    let inner = Arc::new(Inner {
        queue: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
        cap: cap.max(1),
    });
    (
        Tx {
            inner: inner.clone(),
        },
        Rx { inner },
    )
}

struct Inner<T> {
    queue: Mutex<VecDeque<T>>,
    ready: Condvar,
    cap: usize,
}

pub struct Tx<T> {
    inner: Arc<Inner<T>>,
}

pub struct Rx<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Tx<T> {
    /// `false` when the channel is full.
    pub fn send(&self, value: T) -> bool {
        let mut queue = self.inner.queue.lock().unwrap();
        if queue.len() >= self.inner.cap {
            return false;
        }
        queue.push_back(value);
        self.inner.ready.notify_one();
        true
    }
    pub fn len(&self) -> usize {
        self.inner.queue.lock().unwrap().len()
    }
}

impl<T> Rx<T> {
    pub fn try_recv(&self) -> Option<T> {
        self.inner.queue.lock().unwrap().pop_front()
    }
    pub fn recv_timeout(&self, timeout: Duration) -> Option<T> {
        let queue = self.inner.queue.lock().unwrap();
        let (mut queue, _) = self
            .inner
            .ready
            .wait_timeout_while(queue, timeout, |q| q.is_empty())
            .unwrap();
        queue.pop_front()
    }
}
