import { Controller, Get, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { ClientIdParam, ClientsService } from '../authorization-server/index.js';
import { DomainError } from '../common/errors/domain-error.js';
import { FormFields } from '../common/form-fields.js';
import { SameOriginForm } from '../common/same-origin-form.js';
import { renderAccountPage, renderClientCreated, renderClientsSection } from './account-page.js';
import { HtmlErrorFilter, setFormPage } from './html-error.filter.js';

const ACCOUNT = '/status/account';

/**
 * A signed-in person's account page (API.md 15), for a browser: the sections of their account and
 * the forms of the applications section, each the API's operation (`/users/current/clients`) with
 * the same rules. Pages, not API operations: they stay out of the OpenAPI document.
 */
@ApiExcludeController()
@OptionalAuth()
@UseFilters(HtmlErrorFilter)
@Controller('status/account')
export class AccountPageController {
  constructor(private readonly clients: ClientsService) {}

  @Get()
  async page(@CurrentViewer() viewer: Viewer, @Res() response: Response): Promise<void> {
    response.set('Cache-Control', 'no-store');
    if (!viewer) {
      response.redirect(303, `/status/sign-in?next=${encodeURIComponent(ACCOUNT)}`);
      return;
    }
    const sections = [renderClientsSection(await this.clients.list(viewer.id))];
    response.type('text/html; charset=utf-8').send(renderAccountPage(viewer.username, sections));
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
}
