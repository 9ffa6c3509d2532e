import { Controller, Get, Header, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { ProviderParam } from '../auth/identity/dto.js';
import { ApprovalsService, ClientIdParam, ClientsService } from '../authorization-server/index.js';
import { DomainError } from '../common/errors/domain-error.js';
import { FormFields } from '../common/form-fields.js';
import { SameOriginForm } from '../common/same-origin-form.js';
import { renderClientCreated } from './account-page.js';
import { AccountPageService } from './account-page.service.js';
import { HtmlErrorFilter, setFormPage } from './html-error.filter.js';

const ACCOUNT = '/status/account';

/**
 * A signed-in person's account page (API.md 15), a page for a browser as the sign-in form is (out
 * of the OpenAPI document; the API has `GET /users/current/identities` and
 * `/users/current/clients`, `/users/current/authorizations`): its sections, and their forms, each the API's operation with the same
 * rules. Registered before the status pages, whose `/status/{uuid}` would take `account` for a uuid.
 */
@ApiExcludeController()
@ApiAuth()
@OptionalAuth()
@UseFilters(HtmlErrorFilter)
@Controller('status/account')
export class AccountPageController {
  constructor(
    private readonly account: AccountPageService,
    private readonly clients: ClientsService,
    private readonly approvals: ApprovalsService,
  ) {}

  /** The page; without a session, the sign-in form first. */
  @Get()
  @Header('Cache-Control', 'private, no-cache')
  async page(@CurrentViewer() viewer: Viewer, @Res() response: Response): Promise<void> {
    if (!viewer) {
      response.redirect(303, `/status/sign-in?next=${encodeURIComponent(ACCOUNT)}`);
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
      href: ACCOUNT,
      label: 'Back to your account',
      refused: 'Nothing was unlinked.',
      retry: 'Try again at',
    });
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to change your account');
    }
    await this.account.unlink(viewer, provider);
    response.set('Cache-Control', 'no-store').redirect(303, ACCOUNT);
  }

  /** POST /users/current/clients for a browser: the redirect URIs one per line, then the page with the secret. */
  @Post('clients')
  @SameOriginForm()
  async register(
    @FormFields() form: URLSearchParams,
    @CurrentViewer() viewer: Viewer,
    @Res() response: Response,
  ): Promise<void> {
    setFormPage(response, {
      href: `${ACCOUNT}#applications`,
      label: 'Back to your account',
      refused: 'The application was not registered.',
      retry: 'Try again at',
    });
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to register an application');
    }
    const name = (form.get('name') ?? '').trim();
    const redirectUris = (form.get('redirect_uris') ?? '')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '');
    if (name === '' || name.length > 128 || redirectUris.length === 0 || redirectUris.length > 10) {
      throw new DomainError(
        'invalid_input',
        'give the application a name (128 characters at most) and one to ten redirect URIs, one per line.',
      );
    }
    const created = await this.clients.create(viewer.id, {
      name,
      redirectUris,
      confidential: form.get('confidential') === 'true',
    });
    response
      .status(201)
      .set('Cache-Control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(renderClientCreated(viewer.username, created.client, created.clientSecret));
  }

  /** DELETE /users/current/clients/{client_id} for a browser, then back to the page. */
  @Post('clients/:client_id/delete')
  @SameOriginForm()
  async remove(
    @Param() { client_id }: ClientIdParam,
    @CurrentViewer() viewer: Viewer,
    @Res() response: Response,
  ): Promise<void> {
    setFormPage(response, {
      href: `${ACCOUNT}#applications`,
      label: 'Back to your account',
      refused: 'The application was not deleted.',
      retry: 'Try again at',
    });
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to delete an application');
    }
    await this.clients.remove(viewer.id, client_id);
    response.set('Cache-Control', 'no-store').redirect(303, `${ACCOUNT}#applications`);
  }

  /** DELETE /users/current/authorizations/{client_id} for a browser, then back to the page. */
  @Post('authorizations/:client_id/revoke')
  @SameOriginForm()
  async revoke(
    @Param() { client_id }: ClientIdParam,
    @CurrentViewer() viewer: Viewer,
    @Res() response: Response,
  ): Promise<void> {
    setFormPage(response, {
      href: `${ACCOUNT}#authorizations`,
      label: 'Back to your account',
      refused: 'Nothing was revoked.',
      retry: 'Try again at',
    });
    if (!viewer) {
      throw new DomainError('unauthorized', 'Sign in to revoke an application');
    }
    await this.approvals.revoke(viewer.id, client_id);
    response.set('Cache-Control', 'no-store').redirect(303, `${ACCOUNT}#authorizations`);
  }
}
