import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import {
  API_KEY_HEADER_SCHEME,
  API_KEY_SCHEME,
  BEARER_SCHEME,
  GITHUB_SIGNATURE_SCHEME,
  REGISTRY_CLIENT_SCHEME,
  METRICS_SCHEME,
} from './auth/api-auth.decorator.js';
import { REGISTRY_CLIENT_SCOPES } from './auth/scopes.js';
import { discovered } from './common/discovered.js';
import { RefinesOpenApi, type OpenApiRefinement } from './common/openapi-refinement.js';
import { finishDocument } from './openapi-document.js';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Workflow registry, authentication and VM orchestration API')
    .setDescription(
      [
        'Area A issues tokens (`/api/v1/auth`) and manages users; area B registers Workflow Testing RO-Crates',
        'and reports their CI test status (LifeMonitor paths and operation ids); area C drives virtual machines',
        'on the configured clouds (`/api/v1/<operation>{/<cloud>}{.json}`).',
        '',
        'Authorize with a token from `POST /api/v1/auth`: as a Bearer token, the `X-Auth-Token` header, or the',
        '`session` cookie that the login sets; or with an API key (`POST /users/current/apikeys`): alone in',
        '`X-API-Key` (apiKeyHeader), or as `Authorization: ApiKey <key>`. Each area has its own error body (see the schemas).',
      ].join('\n'),
    )
    .setVersion('1.0')
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addServer('/', 'This service')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'The token from `POST /api/v1/auth`. Every operation that takes it also takes it as the `X-Auth-Token` ' +
          'header or the `session` cookie the login sets (a browser sends that by itself); only this scheme is ' +
          'listed so that a generated client sends the token once.',
      },
      BEARER_SCHEME,
    )
    .addSecurity(API_KEY_SCHEME, {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description:
        'An API key from `POST /users/current/apikeys`, as `ApiKey <key>` (type both words here; the key alone ' +
        'goes in apiKeyHeader). A request with a key is decided by the key alone.',
    })
    .addSecurity(API_KEY_HEADER_SCHEME, {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description:
        'An API key from `POST /users/current/apikeys`, alone: paste the key as it is (`wfk_…`). A request with a ' +
        'key is decided by the key alone.',
    })
    .addSecurity(METRICS_SCHEME, {
      type: 'http',
      scheme: 'bearer',
      description: 'METRICS_TOKEN, for /metrics only, when that is set',
    })
    .addSecurity(REGISTRY_CLIENT_SCHEME, {
      type: 'oauth2',
      description:
        "A registry client's token (client credentials, RFC 6749 4.4), sent as `Authorization: Bearer`; for the " +
        'operations that need a `registry.*` scope, which only a registry token holds',
      flows: {
        clientCredentials: {
          tokenUrl: '/oauth2/token',
          scopes: Object.fromEntries(
            REGISTRY_CLIENT_SCOPES.map((scope) => [scope, `LifeMonitor's ${scope}`]),
          ),
        },
      },
    })
    .addSecurity(GITHUB_SIGNATURE_SCHEME, {
      type: 'apiKey',
      in: 'header',
      name: 'X-Hub-Signature-256',
      description:
        '`sha256=<hex HMAC-SHA256 of the raw body with GITHUB_WEBHOOK_SECRET>`, as GitHub signs its webhook deliveries; ' +
        'for `POST /integrations/github/webhooks` only',
    })
    .build();
  const document = SwaggerModule.createDocument(app, config);
  for (const refinement of discovered<OpenApiRefinement>(app.get(DiscoveryService), RefinesOpenApi)) {
    refinement.refineOpenApi(document);
  }
  // Last: its examples are built from the schemas as the refinements left them.
  return finishDocument(document);
}

/** Swagger UI at /docs and the OpenAPI document at /docs-json, served from local assets. */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'Workflow infrastructure API',
    // Deep links (`/docs#/<tag>/<operationId>`) open one operation: Swagger UI keeps only the
    // operations near the viewport in the page, so a link is how a person (or a test) reaches one.
    swaggerOptions: { persistAuthorization: true, displayOperationId: true, deepLinking: true },
  });
}
