import type { DiscoveryService } from '@nestjs/core';

/**
 * The instances of every provider carrying `decorator`, in any module of the app, each once (a
 * class listed in two modules is still one registration). Ready once the app's providers exist:
 * call it from `onModuleInit` or later, never from a constructor.
 */
export function discovered<T>(discovery: DiscoveryService, decorator: { readonly KEY: string }): T[] {
  const instances = new Set<T>();
  for (const wrapper of discovery.getProviders({ metadataKey: decorator.KEY })) {
    if (wrapper.instance !== undefined && wrapper.instance !== null) {
      instances.add(wrapper.instance as T);
    }
  }
  return [...instances];
}
