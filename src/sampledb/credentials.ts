// The owner's credentials Secret (generated once with a CSPRNG password, or supplied by the user) and the
// superuser's, which is always generated and never leaves the operator's Jobs and the database pod.
import { createHash, randomInt } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import type { SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';

export const USERNAME_KEY = 'username';
export const PASSWORD_KEY = 'password';
export const PASSWORD_LENGTH = 40;
/**
 * The superuser the image's entrypoint creates (POSTGRES_USER). Admission refuses it as bootstrap.owner, so the
 * owner applications log in as is never this role.
 */
export const SUPERUSER_ROLE = 'postgres';

// Letters and digits only: no shell, SQL, URI or YAML quoting can go wrong with them; 40 of 62 symbols is ~238 bits.
const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A uniformly random integer in [0, max); `crypto.randomInt` by default (a CSPRNG, no modulo bias). */
export type RandomInt = (max: number) => number;

export function generatePassword(length = PASSWORD_LENGTH, random: RandomInt = randomInt): string {
  let password = '';
  for (let i = 0; i < length; i++) password += PASSWORD_ALPHABET[random(PASSWORD_ALPHABET.length)];
  return password;
}

const encode = (value: string) => Buffer.from(value, 'utf8').toString('base64');
export const decodeSecretValue = (value: string | undefined) =>
  value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');

/**
 * The desired generated credentials Secret, or `undefined` when the user supplies one.
 *
 * `existing` is the Secret as it is in the cluster. A password already there is kept as it is, always: rotating it
 * here would lock the application out of a database whose role still has the old one.
 */
export function credentialsSecret(
  instance: SampleDbInstance,
  existing: V1Secret | undefined,
  random: RandomInt = randomInt,
): V1Secret | undefined {
  if (!instance.credentials.generated) return undefined;
  const owner = instance.spec.bootstrap.owner;
  // An empty value is no password at all, so it is the one case where one is generated into an existing Secret.
  const kept = existing?.data?.[PASSWORD_KEY];
  const password = kept ? kept : encode(generatePassword(PASSWORD_LENGTH, random));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: childMeta(instance, instance.names.generatedCredentialsSecret, 'credentials'),
    type: 'Opaque',
    // Immutable would stop an accidental rotation at the API too, but also a deliberate one; left mutable.
    data: { [USERNAME_KEY]: encode(owner), [PASSWORD_KEY]: password },
  };
}

/** Reads username/password from a credentials Secret (generated or user-supplied); `undefined` if incomplete. */
export function readCredentials(
  secret: V1Secret | undefined,
): { username: string; password: string } | undefined {
  const username = decodeSecretValue(secret?.data?.[USERNAME_KEY]) ?? secret?.stringData?.[USERNAME_KEY];
  const password = decodeSecretValue(secret?.data?.[PASSWORD_KEY]) ?? secret?.stringData?.[PASSWORD_KEY];
  if (!username || !password) return undefined;
  return { username, password };
}

/**
 * A Secret of a role the operator generates (the superuser's, the monitoring role's): `role` with a generated
 * password, kept as it is once `existing` has one (the role in the database has that password).
 */
export function generatedRoleSecret(
  instance: SampleDbInstance,
  name: string,
  role: string,
  existing: V1Secret | undefined,
  random: RandomInt = randomInt,
): V1Secret {
  const kept = existing?.data?.[PASSWORD_KEY];
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: childMeta(instance, name, 'credentials'),
    type: 'Opaque',
    data: {
      [USERNAME_KEY]: encode(role),
      [PASSWORD_KEY]: kept ? kept : encode(generatePassword(PASSWORD_LENGTH, random)),
    },
  };
}

/** The superuser's Secret: read only by the database pod's entrypoint and the operator's Jobs. */
export function superuserSecret(
  instance: SampleDbInstance,
  existing: V1Secret | undefined,
  random: RandomInt = randomInt,
): V1Secret {
  return generatedRoleSecret(instance, instance.names.superuserSecret, SUPERUSER_ROLE, existing, random);
}

/**
 * Which owner password a Job applied, without saying anything about it to whoever can read Jobs: a SHA-256 keyed
 * with the superuser's password (which only the operator and the Jobs know). The password Job's script computes the
 * same from its environment (`printf '%s:%s' "$PGPASSWORD" "$SAMPLEDB_OWNER_PASSWORD" | sha256sum`).
 */
export function passwordFingerprint(superuserPassword: string, ownerPassword: string): string {
  return createHash('sha256').update(`${superuserPassword}:${ownerPassword}`, 'utf8').digest('hex');
}
