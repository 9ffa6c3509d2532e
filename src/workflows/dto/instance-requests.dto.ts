import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsNotEmptyObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { IsHttpUrl, OptionalText, RequiredText } from '../../common/validation.js';
import { COLUMN_LENGTHS } from '../columns.js';

export class NewInstanceServiceDto {
  // The enum (the registered CI services) is filled in by ServiceTypeSchema.
  @IsString()
  @ApiProperty({
    type: String,
    description: 'The CI service type, one of the services this deployment knows',
  })
  type!: string;

  @IsHttpUrl(
    'https://api.github.com',
    "The service's API base URL (a service's web site is taken where it says so)",
  )
  @MaxLength(COLUMN_LENGTHS.serviceUrl)
  url!: string;
}

export class AddInstanceDto {
  @RequiredText(1, COLUMN_LENGTHS.name, 'nightly on GitHub Actions')
  name!: string;

  @IsDefined({ message: 'service is required' })
  @IsNotEmptyObject({ nullable: false }, { message: 'service must be an object with type and url' })
  @ValidateNested()
  @Type(() => NewInstanceServiceDto)
  @ApiProperty({ type: NewInstanceServiceDto })
  service!: NewInstanceServiceDto;

  @RequiredText(
    1,
    COLUMN_LENGTHS.resource,
    'repos/crs4/life_monitor/actions/workflows/ci.yml',
    'Where the tests live on the service, in a form that service takes (see API.md 2.8, 7.1)',
  )
  resource!: string;

  /** LifeMonitor's flag: true for a service that runs the tests itself (`managed`, API.md 17). */
  @IsOptional()
  @IsBoolean({ message: 'managed must be true or false' })
  @ApiPropertyOptional({
    example: false,
    description:
      "LifeMonitor's flag: true with `service.type` `managed` (the service runs the suite itself on the executor " +
      'the `resource` names, API.md 17), false (or left out) for a CI service',
  })
  managed?: boolean;
}

export class UpdateInstanceDto {
  @OptionalText(1, COLUMN_LENGTHS.name, 'nightly on GitHub Actions')
  name?: string;

  @OptionalText(
    1,
    COLUMN_LENGTHS.resource,
    'repos/crs4/life_monitor/actions/workflows/nightly.yml',
    'A new resource on the same service: the builds of the old one are forgotten and a check is due at once',
  )
  resource?: string;
}
