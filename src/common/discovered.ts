import type { Provider } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

/**
 * The instances of every provider whose class carries `decorator` (made by
 * `DiscoveryService.createDecorator`), in any module of the app, each once (a class listed in two
 * modules is still one registration), in registration order: modules as the app imports them,
 * providers as each module lists them. Complete once the app's providers exist: call it from
 * `onModuleInit` or later, never from a constructor.
 */
export function discovered<T>(discovery: DiscoveryService, decorator: { readonly KEY: string }): T[] {
  const instances = new Set<T>();
  for (const wrapper of discovery.getProviders()) {
    const instance: unknown = wrapper.instance;
    if (typeof instance !== 'object' || instance === null || wrapper.isAlias) {
      continue;
    }
    if (Reflect.getMetadata(decorator.KEY, instance.constructor) !== undefined) {
      instances.add(instance as T);
    }
  }
  return [...instances];
}

/** Provides `token` as a function listing the instances registered with `decorator` (see discovered). */
export function registrationsProvider(token: symbol, decorator: { readonly KEY: string }): Provider {
  return {
    provide: token,
    useFactory: (discovery: DiscoveryService) => () => discovered(discovery, decorator),
    inject: [DiscoveryService],
  };
}
