import { Controller, Get, Header, HttpCode, Param, Post, Req, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../auth/public.decorator.js';
import { postedFields } from '../common/form-fields.js';
import { MailUnsubscribeService, ONE_CLICK, type UnsubscribeView } from '../notifications/index.js';
import { HtmlErrorFilter } from './html-error.filter.js';
import { renderPage } from './templates.js';

/**
 * A mail's one-click unsubscribe link (RFC 8058, API.md 6.4). Its GET only shows what the link
 * stops, with a button: mail scanners and link previews fetch every link of a mail, and a GET
 * must not unsubscribe anybody. Its POST (the button, or the mail provider's one click) does it.
 * No token, no cookie: the signed link is the credential, so no origin check either.
 *
 * Out of the OpenAPI document, as the sign-in pages are: a link comes only from a mail, signed
 * with this service's secret, so no example could work in "Try it out", and a working one would
 * be a live link in the public document. The channels' POST there tells of the links (API.md 6.4).
 */
@ApiExcludeController()
@Public()
@UseFilters(HtmlErrorFilter)
@Controller('unsubscribe')
export class UnsubscribePageController {
  constructor(private readonly unsubscribing: MailUnsubscribeService) {}

  @Get(':token')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  @Header('X-Robots-Tag', 'noindex')
  async confirm(@Param('token') token: string): Promise<string> {
    return unsubscribePage(token, await this.unsubscribing.preview(token), false);
  }

  @Post(':token')
  @HttpCode(200)
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  @Header('X-Robots-Tag', 'noindex')
  async unsubscribe(
    @Param('token') token: string,
    @Req() request: Request & { rawBody?: Buffer },
  ): Promise<string> {
    const fields = await postedFields(request);
    return unsubscribePage(
      token,
      await this.unsubscribing.unsubscribe(token, fields.get(ONE_CLICK.field)),
      true,
    );
  }
}

function unsubscribePage(token: string, view: UnsubscribeView, done: boolean): string {
  const workflow = view.list.kind === 'workflow' ? view.list.workflowUuid : undefined;
  return renderPage('unsubscribe', {
    title: done ? 'Unsubscribed' : 'Unsubscribe',
    state: done ? 'done' : view.active ? 'active' : 'inactive',
    token,
    address: view.address,
    workflow,
    what: workflow
      ? `the notifications of workflow ${workflow}`
      : 'the mails saying that a new version of a followed repository could not be registered (FOLLOW_FAILED)',
    effect: workflow
      ? 'This ends your subscription to the workflow: its notifications stop, by mail and through your other channels. You can subscribe again on the API.'
      : 'This turns FOLLOW_FAILED off on this address; your other channels and subscriptions stay as they are.',
  });
}
