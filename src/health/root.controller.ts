import { Controller, Get, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';

/**
 * `GET /` sends a newcomer to the status page of the workflows they may see (API.md 5.4), which
 * links to the API's Swagger UI. Not an API operation, so it stays out of the OpenAPI document;
 * 302, not 301, so that browsers do not keep it for ever.
 */
@ApiExcludeController()
@Public()
@Controller()
export class RootController {
  @Get()
  @Redirect('/status', 302)
  root(): void {
    // The redirect is the whole reply.
  }
}
