import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { BEARER_SCHEME, COOKIE_SCHEME, HEADER_SCHEME } from './auth/api-auth.decorator.js';
import { SESSION_COOKIE } from './auth/token-carriers.js';

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
        '`session` cookie that the login sets. Each area has its own error body (see the schemas).',
      ].join('\n'),
    )
    .setVersion('1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, BEARER_SCHEME)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Auth-Token' }, HEADER_SCHEME)
    .addCookieAuth(SESSION_COOKIE, { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE }, COOKIE_SCHEME)
    .addSecurity('metrics', {
      type: 'http',
      scheme: 'bearer',
      description: 'METRICS_TOKEN, for /metrics only',
    })
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** Swagger UI at /docs and the OpenAPI document at /docs-json, served from local assets. */
export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'Workflow infrastructure API',
    swaggerOptions: { persistAuthorization: true, displayOperationId: true },
  });
}
