import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** `validate`'s reply (LifeMonitor's): `data` when valid, `message` and `error` when not. */
export class ConfigValidationDto {
  @ApiProperty({ example: true, description: 'true when the file matches the schema' })
  valid!: boolean;

  @ApiPropertyOptional({
    type: Object,
    description: 'The configuration with the schema’s defaults filled in (when valid)',
    example: {
      public: false,
      issues: { include: [], exclude: [] },
      push: {
        branches: [{ name: 'main', update_registries: [], enable_notifications: true }],
        tags: [{ name: 'v*.*.*', update_registries: [], enable_notifications: true }],
      },
    },
  })
  data?: object;

  @ApiPropertyOptional({
    description: 'Where the file breaks the schema, in short (when not valid)',
    example: "'public' must be boolean",
  })
  message?: string;

  @ApiPropertyOptional({
    description: 'The rule broken and the value found (when not valid)',
    example:
      "'public' must be boolean. Failed validating 'type' in schema #/properties/public/type; on instance /public: \"yes\"",
  })
  error?: string;
}

/** A `.lifemonitor.yaml` as `validate`'s request examples send it. */
export const CONFIG_FILE_EXAMPLE = [
  'name: sort-and-change-case',
  'public: false',
  'push:',
  '  branches:',
  '    - name: main',
  '  tags:',
  '    - name: "v*.*.*"',
  '',
].join('\n');
