// The controller image: built from this repository's Dockerfile with @pulumi/docker-build and pushed, or a prebuilt
// reference from config. Either way the result is `repo@sha256:...`, so only a new image rolls the Deployment.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as dockerBuild from '@pulumi/docker-build';
import * as pulumi from '@pulumi/pulumi';
import type { BuildImageConfig, ImageConfig } from './config.ts';

/** The repository root: the Docker build context (src/deploy/ and lib/deploy/ are both two levels down). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface RegistryCredentials {
  readonly username?: string;
  readonly password?: pulumi.Output<string>;
}

export interface ControllerImage {
  /** `repo@sha256:...`. */
  readonly ref: pulumi.Output<string>;
  /** `sha256:...`. */
  readonly digest: pulumi.Output<string>;
}

/** `ghcr.io/acme` → `ghcr.io`: the address docker logs in to. */
export function registryHost(registry: string): string {
  return registry.split('/')[0] ?? registry;
}

export function imageBuildArgs(
  config: BuildImageConfig,
  credentials: RegistryCredentials,
): dockerBuild.ImageArgs {
  const repository = `${config.registry}/${config.repository}`;
  const cacheRef = `${repository}:buildcache`;
  return {
    context: { location: REPO_ROOT },
    dockerfile: { location: join(REPO_ROOT, 'Dockerfile') },
    platforms: config.platforms as dockerBuild.Platform[],
    push: config.push,
    tags: [`${repository}:${config.tag}`],
    ...(config.cache
      ? {
          cacheFrom: [{ registry: { ref: cacheRef } }],
          cacheTo: [
            {
              registry: {
                ref: cacheRef,
                mode: dockerBuild.CacheMode.Max,
                imageManifest: true,
                ociMediaTypes: true,
              },
            },
          ],
        }
      : {}),
    ...(credentials.password
      ? {
          registries: [
            {
              address: registryHost(config.registry),
              ...(credentials.username ? { username: credentials.username } : {}),
              password: pulumi.secret(credentials.password),
            },
          ],
        }
      : {}),
  };
}

export function controllerImage(
  name: string,
  config: ImageConfig,
  credentials: RegistryCredentials,
  opts?: pulumi.CustomResourceOptions,
): ControllerImage {
  if (!config.build) {
    return {
      ref: pulumi.output(config.ref),
      digest: pulumi.output(config.ref.slice(config.ref.lastIndexOf('@') + 1)),
    };
  }
  const image = new dockerBuild.Image(name, imageBuildArgs(config, credentials), opts);
  const repository = `${config.registry}/${config.repository}`;
  return { ref: pulumi.interpolate`${repository}@${image.digest}`, digest: image.digest };
}
