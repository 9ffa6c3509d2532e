import { Controller, Get, HttpCode, Post, Req, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../../auth/public.decorator.js';
import { TAGS } from '../../common/api-tags.js';
import { ProblemDto, problemExample } from '../../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../../common/filters/problem-details.filter.js';
import { CONFIG_FILE_EXAMPLE, ConfigValidationDto } from './dto/config-validation.dto.js';
import { checkConfigFile, LIFEMONITOR_CONFIG_SCHEMA } from './lifemonitor-config.js';

/** `.lifemonitor.yaml`'s schema and validator, at LifeMonitor's paths (API.md 12); no token, as LifeMonitor's. */
@Public()
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.webhooks)
@ApiPayloadTooLargeResponse({ type: ProblemDto, description: 'A request body over the limit' })
@Controller('integrations/github/config')
export class GithubConfigController {
  @Get('schema.json')
  @ApiOperation({
    operationId: 'lifemonitor-json',
    summary: 'The JSON schema of the `.lifemonitor.yaml` configuration file (LifeMonitor’s)',
  })
  @ApiOkResponse({
    description: 'JSON Schema draft-07',
    schema: { type: 'object', additionalProperties: true },
    example: { $schema: 'http://json-schema.org/draft-07/schema#', title: 'LifeMonitor Configuration File' },
  })
  schema(): object {
    return LIFEMONITOR_CONFIG_SCHEMA;
  }

  @Post('validate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'validate',
    summary: 'Validate a `.lifemonitor.yaml` against the schema',
    description:
      'The body is the file itself, YAML or JSON, whatever the media type it is sent as. Answers ' +
      '`{"valid": true, "data"}` (with the schema’s defaults filled in) or `{"valid": false, "message", "error"}`; ' +
      'an empty body, or one that is neither YAML nor JSON, is a 400.',
  })
  @ApiConsumes('application/yaml', 'text/yaml', 'application/octet-stream')
  @ApiBody({
    description: 'A `.lifemonitor.yaml`',
    schema: { type: 'string', example: CONFIG_FILE_EXAMPLE },
  })
  @ApiOkResponse({
    type: ConfigValidationDto,
    description: 'Whether the file is valid: its data with the defaults filled in, or what is wrong',
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'An empty body, or one that is neither YAML nor JSON',
    example: problemExample(400, 'the body is empty: send the YAML or JSON of a .lifemonitor.yaml'),
  })
  validate(@Req() request: Request & { rawBody?: Buffer }): ConfigValidationDto {
    return checkConfigFile(request.rawBody ?? (Buffer.isBuffer(request.body) ? request.body : undefined));
  }
}
