import { DiscoveryService } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * A part of the OpenAPI document that only the running app knows (values that come from
 * registered classes, not from decorators): a provider marked @RefinesOpenApi() gets the built
 * document before it is served.
 */
export interface OpenApiRefinement {
  refineOpenApi(document: OpenAPIObject): void;
}

export const RefinesOpenApi = DiscoveryService.createDecorator<void>();
