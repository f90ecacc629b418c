//! Typed reads of stream events that find what a `serde_json::Value` lookup would find
//! (`get`, `as_str`, `as_u64`, `as_array`): a field of another type is absent rather
//! than an error, a repeated field's last value wins, and what is not read is skipped
//! without being built. Each reader names only the fields it needs.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A JSON value kept only when it is text (borrowed from the event where it needs no
/// unescaping) or a non-negative integer; anything else is read and dropped.
#[derive(Default)]
pub(crate) enum Scalar<'a> {
    Text(Cow<'a, str>),
    Count(u64),
    #[default]
    Other,
}

impl Scalar<'_> {
    /// The text, as `Value::as_str` finds it.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The count, as `Value::as_u64` finds it.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Scalar::Count(n) => Some(*n),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(value: D) -> Result<Self, D::Error> {
        value.deserialize_any(Read(PhantomData::<Scalar<'de>>))
    }
}

/// A JSON object's fields a reader needs.
pub(crate) trait Fields<'de>: Default {
    /// Reads the value of `key` (skipping it when it is not needed).
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

/// The fields of a JSON object, or `None` for any other value.
pub(crate) struct Object<T>(pub Option<T>);

impl<'de, T: Fields<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(value: D) -> Result<Self, D::Error> {
        value.deserialize_any(Read(PhantomData::<Object<T>>))
    }
}

/// The first item of a JSON array, when it is an object; the others are skipped.
pub(crate) struct First<T>(pub Option<T>);

impl<'de, T: Fields<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(value: D) -> Result<Self, D::Error> {
        value.deserialize_any(Read(PhantomData::<First<T>>))
    }
}

/// The items of a JSON array, or `None` for any other value.
pub(crate) struct List<T>(pub Option<Vec<T>>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(value: D) -> Result<Self, D::Error> {
        value.deserialize_any(Read(PhantomData::<List<T>>))
    }
}

/// What each reader keeps of each kind of JSON value; by default, nothing.
trait Kept<'de>: Sized {
    fn nothing() -> Self;

    fn text(_: Cow<'de, str>) -> Self {
        Self::nothing()
    }

    fn count(_: u64) -> Self {
        Self::nothing()
    }

    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::nothing())
    }

    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::nothing())
    }
}

impl<'de> Kept<'de> for Scalar<'de> {
    fn nothing() -> Self {
        Scalar::Other
    }

    fn text(text: Cow<'de, str>) -> Self {
        Scalar::Text(text)
    }

    fn count(n: u64) -> Self {
        Scalar::Count(n)
    }
}

impl<'de, T: Fields<'de>> Kept<'de> for Object<T> {
    fn nothing() -> Self {
        Object(None)
    }

    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut fields = T::default();
        while let Some(key) = map.next_key::<Scalar<'de>>()? {
            fields.field(key.as_str().unwrap_or_default(), &mut map)?;
        }
        Ok(Object(Some(fields)))
    }
}

impl<'de, T: Fields<'de>> Kept<'de> for First<T> {
    fn nothing() -> Self {
        First(None)
    }

    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let first = seq.next_element::<Object<T>>()?.and_then(|o| o.0);
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(First(first))
    }
}

impl<'de, T: Deserialize<'de>> Kept<'de> for List<T> {
    fn nothing() -> Self {
        List(None)
    }

    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(List(Some(items)))
    }
}

/// The visitor for every reader: each kind of value goes to what the reader keeps.
struct Read<K>(PhantomData<K>);

impl<'de, K: Kept<'de>> Visitor<'de> for Read<K> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<K, E> {
        Ok(K::text(Cow::Borrowed(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<K, E> {
        Ok(K::text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<K, E> {
        Ok(K::text(Cow::Owned(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<K, E> {
        Ok(K::count(v))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<K, E> {
        Ok(K::nothing())
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<K, E> {
        Ok(K::nothing())
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<K, E> {
        Ok(K::nothing())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<K, E> {
        Ok(K::nothing())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<K, A::Error> {
        K::map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<K, A::Error> {
        K::seq(seq)
    }
}
