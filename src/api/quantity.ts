// Parses Kubernetes quantities (resource.Quantity) so TypeScript can compare them the way CEL's quantity() does.

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

const SHAPE =
  /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))((?:[KMGTPE]i)|[numkMGTPE]|(?:[eE][+-]?(?:\d+(?:\.\d*)?|\.\d+)))?$/;

/** The numeric value of a quantity (bytes for memory/storage, cores for CPU), or `undefined` if it is not one. */
export function parseQuantity(quantity: string): number | undefined {
  const match = SHAPE.exec(quantity.trim());
  if (!match) return undefined;
  const [, number, suffix = ''] = match;
  const value = Number(number);
  if (suffix in BINARY) return value * (BINARY[suffix] as number);
  if (suffix in DECIMAL) return value * (DECIMAL[suffix] as number);
  return value * 10 ** Number(suffix.slice(1));
}

/** Compares two quantities like CEL's `quantity(a).compareTo(quantity(b))`: -1, 0 or 1. */
export function compareQuantities(a: string, b: string): number {
  const left = parseQuantity(a);
  const right = parseQuantity(b);
  if (left === undefined || right === undefined)
    throw new Error(`not a quantity: ${left === undefined ? a : b}`);
  return Math.sign(left - right);
}
