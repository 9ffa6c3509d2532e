import { Controller, Get, Header, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { ProviderParam } from '../auth/identity/dto.js';
import { DomainError } from '../common/errors/domain-error.js';
import { SameOriginForm } from '../common/same-origin-form.js';
import { AccountPageService } from './account-page.service.js';
import { HtmlErrorFilter, setFormPage } from './html-error.filter.js';

/**
 * A signed-in person's account page (API.md 15), a page for a browser as the sign-in form is (out
 * of the OpenAPI document; the API has `GET /users/current/identities`). Registered before the
 * status pages, whose `/status/{uuid}` would take `account` for a uuid.
 */
@ApiExcludeController()
@ApiAuth()
@OptionalAuth()
@UseFilters(HtmlErrorFilter)
@Controller('status/account')
export class AccountPageController {
  constructor(private readonly account: AccountPageService) {}

  /** The page; without a session, the sign-in form first. */
  @Get()
  @Header('Cache-Control', 'private, no-cache')
  async page(@CurrentViewer() viewer: Viewer, @Res() response: Response): Promise<void> {
    if (!viewer) {
      response.redirect(303, '/status/sign-in?next=%2Fstatus%2Faccount');
      return;
    }
    response.type('text/html; charset=utf-8').send(await this.account.page(viewer));
  }

  /** DELETE /users/current/identities/{provider} for a browser: then back to the page, or a page saying why not. */
  @Post('identities/:provider/unlink')
  @SameOriginForm()
  async unlink(
    @Param() { provider }: ProviderParam,
    @CurrentViewer() viewer: Viewer,
    @Res() response: Response,
  ): Promise<void> {
    setFormPage(response, {
      href: '/status/account',
      label: 'Back to your account',
      refused: 'Nothing was unlinked.',
      retry: 'Try again at',
    });
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to change your account');
    }
    await this.account.unlink(viewer, provider);
    response.set('Cache-Control', 'no-store').redirect(303, '/status/account');
  }
}
