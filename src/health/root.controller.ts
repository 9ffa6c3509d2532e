import { Controller, Get, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';

/**
 * `GET /` sends a newcomer to the Swagger UI rather than a 404. Not an API operation, so it stays
 * out of the OpenAPI document; 302, not 301, because a status page will take this place later.
 */
@ApiExcludeController()
@Public()
@Controller()
export class RootController {
  @Get()
  @Redirect('/docs', 302)
  root(): void {
    // The redirect is the whole reply.
  }
}
