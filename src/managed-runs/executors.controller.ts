import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { TAGS } from '../common/api-tags.js';
import { RegistryReads } from '../workflows/index.js';
import { ExecutorListDto, toExecutorList } from './dto/executors.dto.js';
import { ExecutorsService } from './executors.service.js';

/** Where managed instances run (API.md 17). */
@RegistryReads()
@ApiTags(TAGS.status)
@Controller('executors')
export class ExecutorsController {
  constructor(private readonly executors: ExecutorsService) {}

  @Get()
  @ApiOperation({
    operationId: 'executors-get',
    summary: 'The executors of managed test instances and the engines each can run',
    description:
      'Every executor of EXECUTORS_FILE (`local` always), with the engines its runners found installed (cwltool, ' +
      'planemo, snakemake, nextflow) and how many runners reported in the last three minutes. A suite whose engine ' +
      'its executor lacks ends as a build `error` naming it. Any signed-in caller may read it.',
  })
  @ApiOkResponse({ type: ExecutorListDto, description: 'The executors, `local` first' })
  async list(): Promise<ExecutorListDto> {
    return toExecutorList(await this.executors.list());
  }
}
