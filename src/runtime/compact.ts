// Object layouts and shared strings for what the cache holds (store.ts, watcher.ts), where every byte counts
// thousands of times over (docs/performance.md, "What the cache keeps").
//
// V8 keeps an object's properties inside the object only up to the number its layout was made for: JSON.parse
// makes objects with exactly their properties inside, but an object built from `{}` (as rest destructuring
// `{ a, ...rest }` does) has room for 4, and an object given properties after a spread (`{ ...item, kind }`) has
// room for the spread's only. Properties past that room go to a backing store of their own, a header and spare
// slots more per object: a cached object's metadata (7 properties and more) and a LIST item given its apiVersion and
// kind each paid 16–24 bytes for it. `objectOf` builds an object whose properties all sit inside it.

type Entries = readonly (readonly [string, unknown])[];

/** An object of each key list seen, made by JSON.parse, so that its layout holds exactly these properties. */
const layouts = new Map<string, object>();
/** Key lists are few (one or two per kind and field); past this many, objects are built the ordinary way. */
const maxLayouts = 1_000;
/** The layout used last, with its keys: objects of a kind mostly come one after another, with the same keys. */
let last: { keys: readonly string[]; layout: object } | undefined;

/**
 * An object with `entries` as its own enumerable properties, in that order: reads, `Object.keys` and
 * `JSON.stringify` see what they would of `Object.fromEntries(entries)`. All its properties sit inside the object.
 */
export function objectOf(entries: Entries): Record<string, unknown> {
  const layout = layoutOf(entries);
  if (!layout) return Object.fromEntries(entries);
  // A spread copy of a plain object keeps its layout, and assigning properties it has keeps it too.
  const out: Record<string, unknown> = { ...layout };
  for (const [key, value] of entries) out[key] = value;
  return out;
}

function layoutOf(entries: Entries): object | undefined {
  const known = last;
  if (known && known.keys.length === entries.length && entries.every(([key], i) => key === known.keys[i])) {
    return known.layout;
  }
  const keys = entries.map(([key]) => key);
  const signature = JSON.stringify(keys);
  let layout = layouts.get(signature);
  if (!layout) {
    // `__proto__` would be assigned as the prototype by objectOf, not as a property.
    if (layouts.size >= maxLayouts || keys.includes('__proto__')) return undefined;
    // null, not a number: the values put in are objects and strings, so the layout's fields need not widen.
    layout = JSON.parse(`{${keys.map((key) => `${JSON.stringify(key)}:null`).join(',')}}`) as object;
    layouts.set(signature, layout);
  }
  last = { keys, layout };
  return layout;
}

/**
 * The last creationTimestamps seen, each held once. JSON.parse gives every string of 10 characters or more a copy
 * of its own (shorter ones it shares), so each cached object held its own 40-byte copy of its second-resolution
 * creation time, while objects created together (a StatefulSet's pods, the children one reconcile creates, objects
 * written in one burst) have the same one. Only recent values are kept: objects arrive roughly in creation order,
 * and a value past the window costs only its own copy, as before.
 */
const timestamps = new Map<string, string>();
const maxTimestamps = 64;

/** `value`, or an equal string already held by another cached object (strings are values: no reader can tell). */
export function sharedTimestamp(value: string): string {
  const known = timestamps.get(value);
  if (known !== undefined) return known;
  if (timestamps.size >= maxTimestamps) timestamps.delete(timestamps.keys().next().value as string);
  timestamps.set(value, value);
  return value;
}
